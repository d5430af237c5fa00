// Package slack is the Slack adapter: a Slack app that works in threads,
// connected with Socket Mode (no public URL) and the Web API through
// github.com/slack-go/slack.
//
// Mention the app in a channel and the message's thread is bound to it: the
// mention and every later message in that thread arrive as inbound
// messages, without further mentions. In a direct message every message
// arrives. The app's own messages (including the message_changed and
// message_deleted echoes of its edits) are never delivered; other bots
// arrive with Author.Bot set. Every Socket Mode envelope is acknowledged
// before it is looked at, and redelivered events (Slack's retries, and the
// message event that duplicates every app_mention) are delivered once.
// Envelopes are then delivered on one lane per thread (internal/lanes):
// a thread's messages, clicks and the deletion of its root in order (an
// edit or deletion is keyed by the thread of the message it is about, not
// by the event's own ts), while a slow name lookup in one thread holds up
// no other.
//
// Outbound messages go into the thread. With Options.Streaming native (the
// default) text streams as Markdown through chat.startStream, appendStream
// and stopStream, tool lines and the plan as task_update and plan_update
// chunks of the open stream, all behind Post and Edit (see stream.go); a
// workspace that refuses streaming, and StreamingEdits, get messages with
// markdown converted to Slack's mrkdwn (see Mrkdwn) edited with
// chat.update. A permission prompt is a Block Kit section with one button
// per option, and editing it removes the buttons. Every message posted
// that is not the agent's text (tool and status lines, notices, plans,
// thoughts, prompts, forms) carries message metadata of event_type
// acpgw_post, by which History reports it as channels.Inbound.Meta (a
// thread's quoted context leaves it out). While a turn runs the
// thread's status line (assistant.threads.setStatus) says the app is
// working, or waiting for an approval while a prompt is open, and its
// agent session is processing (agents.sessions.setStatus, see session.go),
// which shows Slack's Stop button with or without a stream. A click on it
// (agent_session_stopped) arrives as Inbound.Stop.
//
// # Capabilities
//
// *Adapter implements channels.Adapter and its capability interfaces
// (channels.Editor, channels.Prompter, channels.Former, channels.Reactor,
// channels.History, channels.Typer, channels.Uploader, …). Whether it may
// show a status line and share files depends on the app's scopes, so it
// reports its capabilities at run time (channels.CapsReporter): Detect
// asks Slack once (auth.test, nothing on a made-up thread) and logs the
// capability set, and Caps then reports channels.Typer and
// channels.TypingStopper where the status line works, and channels.Uploader
// where the token may share files; before Detect, neither. The first real
// call Slack refuses for good turns the status line (or streaming) off. A
// program therefore calls Detect, then registers the adapter, then runs
// Run (on a goroutine it waits for):
//
//	a, err := slack.New(slack.Options{AppToken: app, BotToken: bot})
//	...
//	if _, err := a.Detect(ctx); err != nil { ... } // a bad bot token
//	router.Add(slack.Platform, a)
//	err = a.Run(ctx, router.Handle)
//
// Options.KnownThread (a lookup in the gateway's store) lets threads bound
// before a restart go on without a new mention; Options.UserGroups fills
// Author.Roles with user group ids for access rules that name them.
//
// # Rate limits
//
// A Web API call that Slack answers with HTTP 429 returns a
// *channels.RateLimitError (with Slack's Retry-After, or one second when
// the header is missing). The adapter never sleeps and never retries;
// slack-go's retry options are off. It counts the tiers of the methods
// it calls for threads itself (ratelimit.go: chat.startStream 20 a
// minute, …) and refuses the call beyond them the same way before
// sending it, the waiting threads in turn; a 429 teaches the method's
// budget. A thread whose first answer waits 10 s or more for Slack's
// limits is told its place privately (busy.go).
//
// # Several edges
//
// Slack allows up to ten Socket Mode connections per app: several gateway
// edges each run an adapter with the same app token, and Slack hands each
// envelope to one connection at random. An envelope not acknowledged
// within 3 s is sent again, to any connection, with the same event_id, a
// new envelope_id and retry_attempt/retry_reason set. The adapter
// acknowledges every envelope as soon as it has read it, before decoding
// it or calling the handler, so a slow handler causes no redelivery; it
// drops a redelivery it has seen itself, and sets Inbound.Event to the
// event_id, which an edge publishes as the Nats-Msg-Id of the inbound
// stream so that JetStream drops one another edge has published
// (TestSocketsShareEventsOnce). A mention comes as two events (message
// and app_mention) with two event ids: with several edges each may
// deliver its own, so only their shared Inbound.ID (the message's ts,
// with the channel) tells them apart.
package slack
