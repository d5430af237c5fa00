package owner

import (
	"context"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// What the router uses of a thread. Each sender puts an event in the
// thread's inbox and never blocks; it reports false once the owner has
// returned (the thread ended, or was evicted: the router makes a new
// one).

// Ref is the thread's reference.
func (t *Thread) Ref() channels.ThreadRef { return t.ref }

// Space is the thread's guild or workspace.
func (t *Thread) Space() string { return t.space }

// Run is the thread's owner loop; the router runs it on its own
// goroutine right after New.
func (t *Thread) Run() { t.run() }

// Done is closed once the owner has returned.
func (t *Thread) Done() <-chan struct{} { return t.done }

// Cancel ends the thread's context: what it still does after a
// shutdown's grace is given up.
func (t *Thread) Cancel() { t.cancel() }

// Interrupted reports, once Done is closed, whether the shutdown cut a
// running turn off (cut) and stopped an agent (stopped).
func (t *Thread) Interrupted() (cut, stopped bool) { return t.cut, t.stopped }

// Took tells a thread not yet running the id of the last message taken
// before it (the store's seen mark), which it does not take again.
func (t *Thread) Took(id channels.MessageID) { t.m.Took(id) }

// IdleSince is when the thread's agent became idle (Unix ns), 0 when it
// has none idle.
func (t *Thread) IdleSince() int64 { return t.idle.Load() }

// Reap asks the owner to stop its idle agent; it reports whether it did.
func (t *Thread) Reap(why string) bool { return t.reap(why) }

// Notice posts n in the thread through its lane.
func (t *Thread) Notice(n sysmsg.Notice) { t.notice(n) }

// Forget ends the thread for good (deleted or archived on its platform:
// by says by whom); it returns once the owner has.
func (t *Thread) Forget(by string, archived bool) { t.forget(by, archived) }

// CloseIfIdle closes the inbox when nothing waits in it, for an
// eviction; false: an event came meanwhile.
func (t *Thread) CloseIfIdle() bool { return t.inbox.CloseIfEmpty() }

// Event sends one of the machine's events.
func (t *Thread) Event(e thread.Event) bool { return t.inbox.event(e) }

// Message is a person's message the router let in.
type Message struct {
	In     channels.Inbound
	Access Access
	// Stop: a stop (the Stop button, or a stop word); All: one that
	// drops the queued messages too.
	Stop, All bool
	// Caught: the catch-up told the thread already.
	Caught bool
	// Seen: the owner marks it seen once taken (a cluster worker).
	Seen bool
	// Taken, when set, is closed once the message's mark and its seen
	// mark are written (or given up), or when the thread ended before
	// taking it.
	Taken chan struct{}
}

// Message sends a person's message.
func (t *Thread) Message(m Message) bool {
	return t.inbox.send(inboundEv{in: m.In, acc: m.Access, stop: m.Stop, all: m.All, caught: m.Caught, seen: m.Seen, taken: m.Taken})
}

// Command sends a gateway command.
func (t *Thread) Command(in channels.Inbound, acc Access) bool {
	return t.inbox.send(commandEv{in: in, acc: acc})
}

// Choice sends a click on a prompt's option.
func (t *Thread) Choice(in channels.Inbound, acc Access, promptID, optionID string) bool {
	return t.inbox.send(choiceEv{in: in, acc: acc, promptID: promptID, optionID: optionID})
}

// Form sends a form's answer.
func (t *Thread) Form(in channels.Inbound, acc Access) bool {
	return t.inbox.send(formEv{in: in, acc: acc})
}

// Reaction sends a 🛑 reaction.
func (t *Thread) Reaction(e thread.ReactionStop) bool { return t.inbox.send(reactionEv{e: e}) }

// Suggest asks for the values a command's argument may take.
func (t *Thread) Suggest(in channels.Inbound) bool { return t.inbox.send(suggestEv{in: in}) }

// TakenOver has the thread told that the worker before this one went
// away.
func (t *Thread) TakenOver(n sysmsg.WorkerLost) bool { return t.inbox.send(takenOverEv{n: n}) }

// FlushSaves waits until what the thread queued so far is written, or
// ctx ends.
func (t *Thread) FlushSaves(ctx context.Context) { t.saves.flush(ctx) }
