// Package abort recognises a chat message that asks the gateway to stop the
// agent's running turn, and owns the `abort` configuration section.
//
// A Detector matches the whole message, after Normalize, against a
// multilingual list of stop phrases ("stop", "abort", "wait", "/stop",
// "detente", "arrête", "stopp", "стоп", "停止", "やめて", "रुको", "توقف", …;
// see BuiltinPhrases). Only a message that is nothing but a stop phrase,
// optionally addressed to the bot and decorated with quotes, case and
// punctuation, is a stop: "STOP!!!", "<@123> stop.", "@bot, wait" and
// "“stop”" are stops; "don't stop", "please wait", "wait for the build" and
// "stop using tabs" are not. A message that is only "wait" is a stop by
// policy: it asks the agent to hold, and the gateway cannot hold a turn
// other than by cancelling it.
//
// Detection is pure: no I/O, no goroutines, no clock. A Detector is
// immutable after New and safe for concurrent use.
//
// # The cancel contract
//
// This package only detects. Package session implements what a stop does,
// and does all of it for a stop from a user allowed to prompt the thread
// (others' stop words are ignored like their prompts):
//
//  1. The stop is handled as soon as it arrives: it never waits behind the
//     thread's queue or its delivery lane, and it is never sent to the agent
//     as a prompt.
//  2. If a turn is running, the gateway sends the ACP session/cancel
//     notification for the thread's session and keeps waiting for the
//     session/prompt response; updates that still arrive are recorded as
//     usual.
//  3. Every permission request of that session still pending is answered
//     with the cancelled outcome (ACP requires the client to do this after
//     session/cancel), and its buttons are disabled.
//  4. Messages queued for the thread behind the turn stay, and run next
//     (the person who stopped is told how many, privately where the
//     platform can); a stop of everything (Detector.IsStopAll: "stop
//     all", "/stop all") drops them too.
//  5. The typing indicator stops.
//  6. If the prompt response (normally stopReason "cancelled") does not
//     arrive within Config.Grace, the agent process is killed and started
//     again, and the thread's session is loaded again where the agent
//     supports it.
//  7. Exactly one notice is posted, naming who stopped the turn, whichever
//     of steps 2 and 6 ended it. A stop while nothing runs says that nothing
//     was running (a stop of everything drops what waits).
//
// With Config.Enabled false no message is a stop and stop words reach the
// agent as ordinary prompts.
package abort
