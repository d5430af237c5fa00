package owner

// The thread's owner: one goroutine per thread runs its Machine and
// performs the effects it asks for. Everything else (the router, the
// agent's tap, the agent's permission request, the delivery lane's
// callbacks, the start and prompt calls) only sends events to its inbox;
// timers are the machine's wake time. Slow work (starting an agent, a
// prompt, which blocks until the turn ends, stopping a process) runs on a
// child goroutine that reports back with an event.

import (
	"context"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/mailbox"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/thread"
)

// inbox holds a thread's events for its owner (a mailbox.Box): the
// machine's events (event) and the owner's own (send). It never blocks a
// sender; once the owner has returned, both report false.
type inbox struct{ *mailbox.Box[ownerEvent] }

func newInbox() inbox { return inbox{mailbox.New[ownerEvent]()} }

// send puts one of the owner's own events.
func (b inbox) send(e ownerEvent) bool { return b.Put(e) }

// event puts one of the machine's events, which the owner applies as it
// is.
func (b inbox) event(e thread.Event) bool { return b.Put(machineEv{e}) }

// ownerEvent is one event in a thread's inbox: take is how the owner
// takes it, on its goroutine.
type ownerEvent interface{ take(t *Thread) }

// awaited is an owner event whose sender waits for an answer: refuse
// answers it when the thread ends before it was taken.
type awaited interface {
	ownerEvent
	refuse(t *Thread)
}

// machineEv is one of the machine's events.
type machineEv struct{ e thread.Event }

func (m machineEv) take(t *Thread) {
	if _, ok := m.e.(thread.Shutdown); ok {
		t.stopped = t.proc != nil
	}
	t.apply(m.e)
}

// The owner's own events, besides the machine's (Event), which senders
// may send as they are.
type (
	// inboundEv is a person's message the router let in.
	inboundEv struct {
		in     channels.Inbound
		acc    Access
		stop   bool // a stop (the Stop button, or a stop word)
		all    bool // a stop that drops the queued messages too
		caught bool // the catch-up told the thread already
		seen   bool // the owner marks it seen once taken (a cluster worker)
		// taken, when set, is closed once the message's mark and its seen
		// mark are written (or given up), or when the thread ended before
		// taking it: a cluster worker acknowledges the event only then.
		taken chan struct{}
	}
	// choiceEv is a click on a prompt's option.
	choiceEv struct {
		in       channels.Inbound
		acc      Access
		promptID string
		optionID string
	}
	// updateEv is an update from the agent's tap.
	updateEv struct {
		u       projector.Update
		history bool
	}
	// permissionEv is the agent's permission request; p.answer gets the
	// answer.
	permissionEv struct{ p *pending }
	// postedEv: the lane posted p's prompt (h) or could not (err).
	postedEv struct {
		p   *pending
		h   channels.Handle
		err error
	}
	// transcriptEv: the start loaded (or began) the session's transcript;
	// sent before the session replays its history.
	transcriptEv struct{ tr *store.Transcript }
	// startedEv: the start ended (AgentStarted).
	startedEv struct {
		res *started
		err error
	}
	// turnDoneEv: the prompt call returned.
	turnDoneEv struct {
		stop string
		err  error
	}
	// exitedEv: proc exited.
	exitedEv struct{ proc *agent.Process }
	// readThreadEv asks for the thread's recent messages (read_thread).
	readThreadEv struct {
		limit int
		reply chan []mcpgate.Message
	}
	// reapEv asks to stop the idle agent; reply says whether it did.
	reapEv struct {
		why   string
		reply chan bool
	}
)

// run is the thread's owner loop. It returns once the machine has
// exited (after Shutdown), or the thread was evicted: not when the
// router's context ends, which the machine's Shutdown follows.
func (t *Thread) run() {
	defer close(t.done)
	defer t.saves.close() // after the lane, which asks for writes too
	defer t.runner.Close()
	if t.reacts != nil {
		defer t.reacts.Close()
	}
	defer t.closeMCP()
	defer t.endContext()
	t.restoreHold()
	mailbox.Run(context.WithoutCancel(t.d.Ctx), t.inbox.Box, (*owner)(t))
	// Whoever still waits on an answer gets "no"; an agent stopped at the
	// thread's end is reported.
	for _, e := range t.inbox.Close() {
		if w, ok := e.(awaited); ok {
			w.refuse(t)
		}
	}
}

// endContext ends the thread's context as its owner returns, but at a
// shutdown, which ends it after its grace.
func (t *Thread) endContext() {
	if !t.d.Host.Closing() {
		t.cancel()
	}
}

// owner is the thread as mailbox.Run drives it.
type owner Thread

func (o *owner) Handle(_ time.Time, e ownerEvent) { e.take((*Thread)(o)) }

// Step applies the machine's Tick once its wake time has come.
func (o *owner) Step(now time.Time) time.Time {
	t := (*Thread)(o)
	if !t.wake.IsZero() && !now.Before(t.wake) {
		t.apply(thread.Tick{})
	}
	return t.wake
}

func (o *owner) Done() bool { return o.m.Exited() || o.evicted }

// apply runs the machine on e and performs its effects.
func (t *Thread) apply(e thread.Event) {
	wake, fx := t.m.Apply(time.Now(), e)
	t.wake = wake
	// Published for Router.reapIdle, which picks among threads; before
	// the effects, which may tell others that the turn ended.
	if at, ok := t.m.IdleSince(); ok {
		t.idle.Store(at.UnixNano())
	} else {
		t.idle.Store(0)
	}
	for _, f := range fx {
		t.perform(f)
	}
}

func (e inboundEv) take(t *Thread) { t.inbound(e) }

func (e choiceEv) take(t *Thread) {
	if t.questionChoice(e) || t.picked(e) {
		return
	}
	t.replyTo = &e.in
	if isContinue(e.promptID) {
		t.apply(thread.ContinueIn{By: e.in.Author, Approver: e.acc.MayApprove(e.in)})
	} else {
		t.apply(thread.PermissionAnswer{ID: e.promptID, Option: e.optionID, By: e.in.Author, Approver: e.acc.MayApprove(e.in)})
	}
	t.replyTo = nil
}

func (e updateEv) take(t *Thread)     { t.update(e.u, e.history) }
func (e permissionEv) take(t *Thread) { t.permission(e.p) }
func (e permissionEv) refuse(*Thread) { e.p.answer <- answered{} }
func (e postedEv) take(t *Thread)     { t.posted(e.p, e.h, e.err) }
func (e transcriptEv) take(t *Thread) { t.tr = e.tr }
func (e startedEv) take(t *Thread)    { t.startEnded(e.res, e.err) }
func (e readThreadEv) take(t *Thread) { e.reply <- t.recentMessages(e.limit) }
func (e readThreadEv) refuse(*Thread) { e.reply <- nil }
func (e takenOverEv) take(t *Thread)  { t.notice(e.n) }
func (e commandEv) take(t *Thread) {
	t.apply(thread.CommandIn{In: e.in, Operator: e.acc.MayOperate(e.in)})
}
func (e suggestEv) take(t *Thread)  { t.suggestions(e.in) }
func (e reapEv) refuse(*Thread)     { e.reply <- false }
func (e exitedEv) refuse(t *Thread) { t.d.Host.AgentEvent(t.ref, "stopped") } // let go at the thread's end
func (e turnDoneEv) take(t *Thread) {
	exited := thread.IsExited(e.err) || (t.proc != nil && t.proc.Err() != nil)
	t.apply(thread.TurnDone{StopReason: e.stop, Err: e.err, Exited: exited})
}

func (e exitedEv) take(t *Thread) {
	if t.proc != e.proc {
		t.d.Host.AgentEvent(t.ref, "stopped")
		return
	}
	t.d.Log.Info("agent exited", "thread", t.ref, "err", e.proc.Err())
	t.apply(thread.ProcessExited{})
	t.d.Host.AgentEvent(t.ref, "exited")
}

func (e optionSetEv) take(t *Thread)      { t.optionSet(e) }
func (e sessionsEv) take(t *Thread)       { t.sessionsListed(e) }
func (e attachedEv) take(t *Thread)       { t.attached(e) }
func (e reactionEv) take(t *Thread)       { t.reaction(e) }
func (e messageEv) take(t *Thread)        { t.message(e) }
func (e messageEv) refuse(*Thread)        { e.reply <- errThreadEnded }
func (e questionEv) take(t *Thread)       { t.questionAsked(e) }
func (e questionEv) refuse(*Thread)       { e.q.answer <- agent.Answer{Action: agent.Cancel} }
func (e questionPostedEv) take(t *Thread) { t.questionPosted(e.q, e.h, e.err) }
func (e formEv) take(t *Thread)           { t.formAnswer(e.in, e.acc) }

func (e inboundEv) refuse(*Thread) {
	if e.taken != nil {
		close(e.taken)
	}
}

func (e reapEv) take(t *Thread) {
	had := t.proc != nil
	t.apply(thread.ReapIdle{Why: e.why})
	e.reply <- had && t.proc == nil
}

// inbound is a person's message: a stop, a numbered answer to a prompt,
// or a prompt.
func (t *Thread) inbound(e inboundEv) {
	// Seen once taken, behind its mark in the thread's saves (a worker
	// that dies between the two leaves the mark, not a message seen and
	// lost): see Router.handle.
	defer func() {
		if e.seen {
			t.saveSeen(e.in)
		}
		if e.taken != nil {
			t.saves.after(func() { close(e.taken) })
		}
	}()
	if e.stop {
		t.d.Log.Info("stop asked", "thread", t.ref, "by", e.in.Author.ID, "queued", t.m.Queued(), "all", e.all)
	} else if e.in.Agent != "" {
		t.pick = e.in.Agent // checked by Router.pickAllowed
	}
	var retaken time.Time
	if !e.stop {
		if rt := t.retake(e.in); rt != nil {
			retaken = rt.Started
		}
	}
	buttons := t.runner.Caps().Prompt
	t.replyTo = &e.in // a stop's or an answer's word goes to its author
	t.apply(thread.Received{In: e.in, Stop: e.stop, All: e.all, Caught: e.caught,
		Numbered: !buttons, Approver: e.acc.MayApprove(e.in), Retaken: retaken})
	t.replyTo = nil
}

// reap asks the thread's owner to stop its agent if it is idle (why says
// why, for the log), and waits for the answer: whether it did.
func (t *Thread) reap(why string) bool {
	reply := make(chan bool, 1)
	return t.inbox.send(reapEv{why: why, reply: reply}) && <-reply
}
