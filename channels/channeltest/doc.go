// Package channeltest helps test code on both sides of the channel contract
// defined by package channels.
//
// The first part is Recorder, a recording fake chat platform. Its Adapter
// method returns a channels.Adapter whose capabilities (channels.CapsOf,
// channels.As) are exactly those chosen in Options, or by SetCaps while it
// runs, so that code finding capabilities can be tested for every
// combination, and for a change of them. The recorder logs every call
// as an Op, the same JSON objects `gateway replay` prints, keeps the current
// state of every posted message, fails calls on request (Inject), rejects
// what a real platform would reject (empty or too long text, invalid UTF-8,
// edits of unknown messages) so dispatch bugs surface in tests, and hands
// inbound messages to a running Run (Deliver, Click).
//
// The second part is RunContract, the contract suite every adapter must pass,
// the fake and each real platform adapter alike. A Harness connects the suite
// to one adapter and the (fake) platform behind it; the suite then checks
// limits, posting, editing, typing, prompts, inbound delivery, a clean stop
// of Run without leaked goroutines, and that no advertised capability is a
// stub.
package channeltest
