package session

// The thread's owner: one goroutine per thread runs its Machine and
// performs the effects it asks for. Everything else (the router, the
// agent's tap, the SDK's permission callback, the delivery lane's
// callbacks, the start and prompt calls) only sends events to its inbox;
// timers are the machine's wake time. Slow work (starting an agent, a
// prompt, which blocks until the turn ends, stopping a process) runs on a
// child goroutine that reports back with an event.

import (
	"sync"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
)

// inbox holds a thread's events for its owner. It never blocks a sender;
// once the owner has returned, send reports false.
type inbox struct {
	mu     sync.Mutex // guards the inbox only, never thread state
	events []any
	closed bool
	wake   chan struct{} // capacity 1: "events arrived"
}

func newInbox() inbox { return inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) send(e any) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	b.events = append(b.events, e)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return true
}

// next takes the oldest event, if any. One at a time: what is not taken
// yet stays for close and closeIfEmpty to see.
func (b *inbox) next() (any, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.events) == 0 {
		return nil, false
	}
	e := b.events[0]
	b.events[0] = nil
	b.events = b.events[1:]
	if len(b.events) == 0 {
		b.events = nil
	}
	return e, true
}

// closeIfEmpty refuses events from now on, unless some wait; it reports
// whether it closed the inbox.
func (b *inbox) closeIfEmpty() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.events) > 0 {
		return false
	}
	b.closed = true
	return true
}

// close refuses events from now on and returns those not taken.
func (b *inbox) close() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	e := b.events
	b.events = nil
	return e
}

// The owner's own events, besides the machine's (Event), which senders
// may send as they are.
type (
	// inboundEv is a person's message the router let in.
	inboundEv struct {
		in     channels.Inbound
		acc    access
		stop   bool // a stop (the Stop button, or a stop word)
		caught bool // the catch-up told the thread already
		seen   bool // the owner marks it seen once taken (a cluster worker)
	}
	// choiceEv is a click on a prompt's option.
	choiceEv struct {
		in       channels.Inbound
		acc      access
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
// exited (after Shutdown), or the thread was evicted.
func (t *thread) run() {
	defer close(t.done)
	defer t.runner.Close()
	if t.reacts != nil {
		defer t.reacts.Close()
	}
	defer t.closeMCP()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	t.restoreHold()
	for !t.m.Exited() && !t.evicted {
		if e, ok := t.inbox.next(); ok {
			t.handle(e)
			continue
		}
		var tc <-chan time.Time
		if !t.wake.IsZero() {
			timer.Reset(time.Until(t.wake))
			tc = timer.C
		}
		select {
		case <-t.inbox.wake:
		case <-tc:
			t.apply(Tick{})
		}
		timer.Stop()
	}
	// Whoever still waits on an answer gets "no"; an agent stopped at the
	// thread's end is reported.
	for _, e := range t.inbox.close() {
		switch e := e.(type) {
		case permissionEv:
			e.p.answer <- answered{}
		case questionEv:
			e.q.answer <- agent.Answer{Action: agent.Cancel}
		case reapEv:
			e.reply <- false
		case readThreadEv:
			e.reply <- nil
		case messageEv:
			e.reply <- errThreadEnded
		case exitedEv:
			t.r.agentEvent(t.ref, "stopped") // let go at the thread's end
		}
	}
}

// apply runs the machine on e and performs its effects.
func (t *thread) apply(e Event) {
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
	if len(t.accepted) > 0 {
		t.settleAccepted()
	}
}

// handle is one event on the owner's goroutine.
func (t *thread) handle(e any) {
	switch e := e.(type) {
	case Shutdown:
		t.stopped = t.proc != nil
		t.apply(e)
	case Event:
		t.apply(e)
	case inboundEv:
		t.inbound(e)
	case choiceEv:
		if t.questionChoice(e) || t.picked(e) {
			break
		}
		t.replyTo = &e.in
		if isContinue(e.promptID) {
			t.apply(ContinueIn{By: e.in.Author, Approver: e.acc.mayApprove(e.in)})
		} else {
			t.apply(PermissionAnswer{ID: e.promptID, Option: e.optionID, By: e.in.Author, Approver: e.acc.mayApprove(e.in)})
		}
		t.replyTo = nil
	case questionEv, questionPostedEv, formEv:
		t.questionEvent(e)
	case updateEv:
		t.update(e.u, e.history)
	case permissionEv:
		t.permission(e.p)
	case postedEv:
		t.posted(e.p, e.h, e.err)
	case transcriptEv:
		t.tr = e.tr
	case startedEv:
		t.startEnded(e.res, e.err)
	case turnDoneEv:
		exited := isExited(e.err) || (t.proc != nil && t.proc.Err() != nil)
		t.apply(TurnDone{StopReason: e.stop, Err: e.err, Exited: exited})
	case exitedEv:
		mine := t.proc == e.proc
		if mine {
			t.r.log.Info("agent exited", "thread", t.ref, "err", e.proc.Err())
			t.apply(ProcessExited{})
			t.r.agentEvent(t.ref, "exited")
		} else {
			t.r.agentEvent(t.ref, "stopped")
		}
	case reactionEv:
		t.reaction(e)
	case readThreadEv:
		e.reply <- t.recentMessages(e.limit)
	case messageEv:
		t.message(e)
	case takenOverEv:
		t.notice(e.n)
	case commandEv:
		t.apply(CommandIn{In: e.in, Operator: e.acc.mayOperate(e.in)})
	case optionSetEv:
		t.optionSet(e)
	case sessionsEv:
		t.sessionsListed(e)
	case suggestEv:
		t.suggestions(e.in)
	case reapEv:
		had := t.proc != nil
		t.apply(ReapIdle{Why: e.why})
		e.reply <- had && t.proc == nil
	default:
		t.r.log.Error("unknown thread event", "thread", t.ref, "event", e)
	}
}

// inbound is a person's message: a stop, a numbered answer to a prompt,
// or a prompt.
func (t *thread) inbound(e inboundEv) {
	if e.seen {
		// Once taken (its mark written, for a prompt): see Router.handle.
		defer t.r.markSeen(t.r.ctx, e.in)
	}
	if t.tookBefore(e.in) && !t.retaking(e.in) {
		t.r.log.Warn("dropping a message the thread took already (delivered twice)", "thread", t.ref, "id", e.in.ID)
		return
	}
	if e.stop {
		t.r.log.Info("stop asked", "thread", t.ref, "by", e.in.Author.ID, "queued", t.m.Queued())
		t.apply(StopIn{By: e.in.Author})
		return
	}
	if t.command(e) {
		return
	}
	if t.answerByNumber(e.acc, e.in) {
		return
	}
	if e.in.Agent != "" {
		t.pick = e.in.Agent // checked by Router.pickAllowed
	}
	t.accept(e.in, t.retake(e.in))
	t.apply(PromptIn{In: e.in, Caught: e.caught})
}

// reap asks the thread's owner to stop its agent if it is idle (why says
// why, for the log), and waits for the answer: whether it did.
func (t *thread) reap(why string) bool {
	reply := make(chan bool, 1)
	return t.inbox.send(reapEv{why: why, reply: reply}) && <-reply
}
