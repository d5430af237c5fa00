package session

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// thread owns one chat thread: its queue, its agent session, its
// projector and its delivery lane.
type thread struct {
	r      *Router
	ref    channels.ThreadRef
	space  string
	ad     channels.Adapter
	runner *dispatch.Runner
	wake   chan struct{} // capacity 1: "the queue changed"

	mu     sync.Mutex // guards the fields below
	proj   *projector.Projector
	policy Policy
	queue  []channels.Inbound
	turn   *turn // the running turn, nil when idle
	// active is set from taking a message off the queue until its turn
	// ended (the agent may still be starting); startStop is a stop that
	// came while the agent was starting.
	active    bool
	startStop *turn
	// starting is set from taking a message off the queue until its
	// turn is set up or its start failed.
	starting bool
	// cancelStart aborts the agent's start while it runs (a stop).
	cancelStart context.CancelFunc
	proc        *agent.Process
	sess        *agent.Session
	slot        bool // holds one of the router's process slots
	evlog       *eventlog.Writer
	tr          *store.Transcript
	prompts     map[string]*pending
	// recording holds, per turn whose end is on its way through the
	// lane, a channel closed once the turn's records are written (only
	// with Options.OnTurnEnd, which waits for them).
	recording []chan struct{}
	idleAt    time.Time // when the last turn ended
	reaper    *time.Timer
	turnSeq   int
	shutting  bool

	// cwd is the session's working directory, for permission prompts.
	cwd string
	// pick is the agent the thread's first message picked
	// (Inbound.Agent), for a thread not bound yet; "" = the policy's.
	pick string

	// end stops the run loop (the thread was deleted); done is closed
	// when it has returned.
	end  context.CancelFunc
	done chan struct{}
}

// turn is the state of the running turn.
type turn struct {
	started time.Time
	prompt  string
	by      channels.Author
	stopper string // who stopped it ("" = nobody)
	reason  stopReason
	// ack is the lane key of the "Stopping…" notice posted when the
	// stop came, "" if none; the final notice replaces it.
	ack      string
	killed   bool
	grace    *time.Timer
	finished chan struct{}
	// stall tells a silent agent (Limits.StallTimeout); stallTimer
	// checks it, nil when that is off.
	stall      stallWatch
	stallTimer *time.Timer
}

// newThread returns a thread's owner; the caller starts its run loop.
func newThread(r *Router, ref channels.ThreadRef, space string, ad channels.Adapter, policy Policy) *thread {
	t := &thread{
		r:       r,
		ref:     ref,
		space:   space,
		ad:      ad,
		wake:    make(chan struct{}, 1),
		prompts: map[string]*pending{},
	}
	t.policy = policy
	t.proj = projector.New(t.policy.Stream)
	_, canEdit := ad.(channels.Editor)
	t.proj.SetCanEdit(canEdit)
	var obs dispatch.Observer
	if r.o.Observer != nil {
		obs = r.o.Observer(ref.Platform)
	}
	lane := dispatch.NewLane(dispatch.Options{
		Observer: obs,
		Adapter:  ad,
		Thread:   ref,
		Stream:   t.policy.Stream,
		Typing:   t.policy.Typing,
		Logger:   r.log,
		RetryFor: r.o.Delivery.RetryFor,
		OnTurnEnd: func(e projector.TurnEnd) {
			if r.o.OnTurnEnd == nil {
				return
			}
			// Delivered; announce it once the turn's records are
			// written too, so that whoever hears of it finds them.
			// (The next turn starts only after they are, so this lane
			// has nothing else to do meanwhile.)
			t.mu.Lock()
			var recorded chan struct{}
			if len(t.recording) > 0 {
				recorded = t.recording[0]
				t.recording = t.recording[1:]
			}
			t.mu.Unlock()
			if recorded != nil {
				select {
				case <-recorded:
				case <-r.ctx.Done():
				}
			}
			r.o.OnTurnEnd(ref, e)
		},
	})
	t.runner = dispatch.Start(r.ctx, lane)
	return t
}

func (r *Router) policyFor(ref channels.ThreadRef, space string) Policy {
	r.mu.Lock()
	f := r.policy
	r.mu.Unlock()
	return f(ref, space)
}

// enqueue adds a prompt under the thread's busy policy.
func (t *thread) enqueue(in channels.Inbound) {
	t.mu.Lock()
	running := t.active
	ahead := len(t.queue)
	busy := t.policy.Busy
	t.queue = append(t.queue, in)
	t.mu.Unlock()
	switch {
	case running && busy == BusyInterrupt:
		t.stop(in.Author, stopByInterrupt)
	case (running || ahead > 0) && !t.r.caught(in): // the catch-up said it once
		if running {
			ahead++
		}
		t.notice(sysmsg.Queued{Ahead: ahead})
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// notice posts a system line right away, outside the turn's order: it
// answers someone's message now (queued, waiting, stopped, could not
// start), so it must not wait behind the turn's text, which a final_only
// turn holds until its end and a long answer paces out. It goes through
// the thread's lane as an urgent notice (dispatch.Lane.Notice), so it is
// delivered as durably as any output: rate limits waited out, outages
// retried for delivery.retryFor, in order with the thread's other
// notices.
func (t *thread) notice(n sysmsg.Notice) {
	t.runner.Notice("", sysmsg.Text(n))
}

// patiently calls try until it succeeds, waiting out rate limits as
// the platform asks and an unreachable platform with a backoff (1 s
// doubling to 30 s); it gives up on an error the platform will repeat
// (channels.IsPermanent), after retryFor, or when ctx ends. It blocks;
// callers run it on a goroutine the router owns. It is for answers that
// have no thread lane (a refusal), which must not be lost any more than
// a lane's output.
func patiently(ctx context.Context, retryFor time.Duration, try func(context.Context) error) error {
	if retryFor <= 0 {
		retryFor = dispatch.DefaultRetryFor
	}
	start := time.Now()
	backoff := time.Duration(0)
	for {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := try(actx)
		cancel()
		if err == nil || channels.IsPermanent(err) {
			return err
		}
		wait := time.Duration(0)
		if rl, ok := errors.AsType[*channels.RateLimitError](err); ok {
			wait = rl.RetryAfter
		} else {
			backoff = min(max(2*backoff, time.Second), 30*time.Second)
			wait = backoff
		}
		if time.Since(start)+wait > retryFor {
			return err
		}
		if !sleep(ctx, wait) {
			return err
		}
	}
}

// laneNotice posts a system line in order with the turn's output.
func (t *thread) laneNotice(n sysmsg.Notice) {
	t.runner.Push(projector.Notice{Text: sysmsg.Text(n)})
}

// run is the thread's owner loop: one turn at a time.
func (t *thread) run(ctx context.Context) {
	defer t.runner.Close()
	for {
		t.mu.Lock()
		var next *channels.Inbound
		if len(t.queue) > 0 && !t.shutting {
			in := t.queue[0]
			t.queue = t.queue[1:]
			next = &in
			t.active, t.starting = true, true
		}
		t.mu.Unlock()
		if next != nil {
			t.runTurn(ctx, *next)
			t.mu.Lock()
			t.active, t.startStop = false, nil
			t.mu.Unlock()
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		}
	}
}

// runTurn runs one prompt to its end.
func (t *thread) runTurn(ctx context.Context, in channels.Inbound) {
	// Typing shows from now on, also while the agent starts.
	t.runner.Do(func(l *dispatch.Lane) { l.AgentStarting(time.Now()) })
	sess, files, err := t.start(ctx, in)
	if err != nil {
		t.runner.Do(stopTyping)
		t.mu.Lock()
		st := t.startStop
		t.starting = false
		t.mu.Unlock()
		switch {
		case st != nil:
			if st.reason == stopByPerson {
				t.notice(sysmsg.StoppedBeforeStart{By: st.stopper})
			}
		case errors.Is(err, errStartTimeout):
			t.r.log.Error("the agent did not start in time", "thread", t.ref, "err", err)
			t.notice(sysmsg.StartTimeout{After: t.r.startTimeout()})
		case ctx.Err() == nil:
			t.r.log.Error("cannot start the agent", "thread", t.ref, "err", err)
			t.notice(sysmsg.StartFailed{Err: err.Error()})
		}
		return
	}
	policy := t.r.policyFor(t.ref, t.space)
	prompt, pics := attach.Prompt(in.Text, files, sess.Process().TakesImages())
	images := make([]agent.Image, len(pics))
	for i, f := range pics {
		images[i] = agent.Image{MimeType: f.ContentType, Data: f.Data}
	}
	tu := &turn{started: time.Now(), prompt: prompt, by: in.Author, finished: make(chan struct{})}
	t.mu.Lock()
	t.starting = false
	if st := t.startStop; st != nil {
		// Stopped while the agent was starting: the prompt never runs.
		t.mu.Unlock()
		if st.reason == stopByPerson {
			t.notice(sysmsg.StoppedBeforeStart{By: st.stopper})
		}
		return
	}
	if t.shutting {
		// The gateway began shutting down while the agent started: the
		// prompt never runs (the shutdown tells the thread), and this
		// agent may have come after the shutdown stopped the thread's.
		proc := t.proc
		w := t.dropProcessLocked()
		t.mu.Unlock()
		t.stopProcess(proc, w)
		return
	}
	t.policy = policy
	if t.reaper != nil {
		t.reaper.Stop()
	}
	t.proj.SetSettings(policy.Stream)
	t.runner.Do(func(l *dispatch.Lane) { l.SetStream(policy.Stream) })
	t.turn = tu
	if d := t.r.o.Limits.StallTimeout; d > 0 {
		tu.stall = stallWatch{after: d, last: tu.started}
		tu.stallTimer = time.AfterFunc(d, func() { t.checkStall(tu) })
	}
	t.turnSeq++
	t.tr.UserPrompt(prompt, tu.started)
	outs := t.proj.BeginTurn(nil)
	t.runner.BeginTurn()
	t.runner.Push(outs...)
	t.mu.Unlock()
	t.markRunning(sess.ID, tu.started)

	// Not ctx: cancelling the Prompt's context makes the SDK drop the
	// agent's answer. Stops go through session/cancel; shutdown too.
	stop, err := sess.Prompt(context.WithoutCancel(ctx), prompt, images...)
	t.endTurn(tu, sess, stop, err)
}

// endTurn closes the turn: projector, lane, records.
func (t *thread) endTurn(tu *turn, sess *agent.Session, stop string, err error) {
	t.mu.Lock()
	if tu.grace != nil {
		tu.grace.Stop()
	}
	if tu.stallTimer != nil {
		tu.stallTimer.Stop()
	}
	exited := errors.Is(err, agent.ErrExited)
	errText := ""
	if err != nil && tu.stopper == "" {
		if exited {
			errText = sysmsg.Crashed{Exit: describeExit(err)}.Reason()
		} else {
			errText = err.Error()
		}
	}
	if err != nil && tu.stopper != "" {
		stop = "cancelled"
	}
	turnRec := store.Turn{
		Thread: t.ref, SessionID: sess.ID, Seq: t.turnSeq, StopReason: stop, Error: errText,
		Started: tu.started, Ended: time.Now(),
		PromptChars: len([]rune(tu.prompt)), ReplyChars: len([]rune(t.proj.TurnText())),
	}
	if u, frames := t.proj.TurnUsage(); frames > 0 {
		turnRec.Used, turnRec.Size, turnRec.UsedKnown, turnRec.SizeKnown = u.Used, u.Size, u.UsedKnown, u.SizeKnown
		turnRec.Cost, turnRec.Currency, turnRec.CostKnown = u.Cost, u.Currency, u.CostKnown
	}
	if tu.stopper != "" {
		t.proj.StopTurn(sysmsg.Stopped{By: tu.stopper, Interrupt: tu.reason == stopByInterrupt, Killed: tu.killed, Grace: t.r.o.Abort.Grace})
	}
	outs := t.proj.EndTurn(stop, errText, nil)
	recorded := make(chan struct{})
	if t.r.o.OnTurnEnd != nil { // only the hook waits for the records
		t.recording = append(t.recording, recorded)
	}
	t.pushEnd(tu, outs)
	dirty := t.tr.Dirty()
	t.tr.MarkClean()
	title := t.proj.Title()
	var gone *agent.Process // the process has exited: its log is closed below
	var goneLog *eventlog.Writer
	if exited || t.proc == nil || t.proc.Err() != nil {
		gone = t.proc
		goneLog = t.dropProcessLocked()
	}
	evlog := t.evlog
	cut := t.shutting // the shutdown tells the thread and clears the mark
	t.turn = nil
	t.idleAt = time.Now()
	t.armReaperLocked()
	t.mu.Unlock()
	close(tu.finished)
	if f := t.r.o.OnTurnFinished; f != nil {
		f(t.ref, stop, err)
	}
	// An agent idle now gives way to a thread waiting for a slot.
	t.r.giveWay()

	ctx := context.Background()
	st := t.r.o.Store
	if err := t.r.persist(ctx, t.ref, "the turn", func(ctx context.Context) error { return st.AddTurn(ctx, turnRec) }); err != nil {
		t.r.log.Error("cannot record the turn", "thread", t.ref, "err", err)
	}
	if err := t.r.persist(ctx, t.ref, "the transcript", func(ctx context.Context) error { return st.SaveEntries(ctx, sess.ID, dirty) }); err != nil {
		t.r.log.Error("cannot save the transcript", "thread", t.ref, "err", err)
	}
	close(recorded)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !cut {
		if err := st.ClearTurnRunning(ctx, t.ref, tu.started); err != nil {
			t.r.log.Warn("cannot clear the turn's running mark", "thread", t.ref, "err", err)
		}
	}
	if title != "" {
		if b, ok, err := st.Binding(ctx, t.ref); err == nil && ok && b.Title != title {
			b.Title = title
			if err := t.r.persist(ctx, t.ref, "the session's title", func(ctx context.Context) error { return st.PutBinding(ctx, b) }); err != nil {
				t.r.log.Error("cannot save the session's title", "thread", t.ref, "err", err)
			}
			if ti, ok := t.ad.(channels.Titler); ok {
				if err := ti.SetTitle(ctx, t.ref, title); err != nil {
					t.r.log.Warn("cannot rename the thread", "thread", t.ref, "err", err)
				}
			}
		}
	}
	if evlog != nil {
		if err := evlog.Sync(); err != nil && !errors.Is(err, fs.ErrClosed) {
			t.r.log.Warn("cannot sync the event log", "thread", t.ref, "err", err)
		}
	}
	t.closeLogAfterExit(gone, goneLog)
}

// Update is the agent's Handler: the tap's goroutine hands every update
// over here. It never blocks: the projector is fast and the lane queues.
func (t *thread) Update(u projector.Update, history bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if history {
		// Replayed by session/load: already in the thread and the
		// transcript (kept from the earlier run), not new output.
		if t.tr != nil && t.tr.Len() == 0 {
			t.tr.Apply(u)
		}
		return
	}
	if t.tr != nil {
		t.tr.Apply(u)
	}
	if tu := t.turn; tu != nil && tu.stallTimer != nil && tu.stall.output(time.Now()) {
		tu.stallTimer.Reset(tu.stall.after)
	}
	if t.turn != nil && t.turn.stopper != "" {
		// Stopped: what the agent still says is recorded, not shown.
		if f := t.r.o.OnUpdate; f != nil {
			tag := u.RawTag
			if tag == "" {
				tag = u.Tag.String()
			}
			f(tag, "stopped")
		}
		return
	}
	if td, ok := t.ad.(channels.ToolDetailer); ok && (u.Tag == projector.TagToolCall || u.Tag == projector.TagToolCallUpdate) {
		td.ToolDetail(t.ref, string(u.Tool.ID), toolDetail(u.Tool))
	}
	outs := t.proj.Apply(&u, nil)
	if len(outs) > 0 {
		t.runner.Push(outs...)
	}
	if f := t.r.o.OnUpdate; f != nil {
		tag := u.RawTag
		if tag == "" {
			tag = u.Tag.String()
		}
		f(tag, t.proj.Suppressed())
	}
}

// checkStall tells the thread, once per silence, that the agent of tu has
// said nothing for Limits.StallTimeout. Time spent waiting for people to
// answer a permission prompt is not the agent's silence.
func (t *thread) checkStall(tu *turn) {
	if !t.r.enter() {
		return
	}
	defer t.r.wg.Done()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.turn != tu {
		return
	}
	now := time.Now()
	if len(t.prompts) > 0 {
		tu.stall.output(now)
	}
	tell, next := tu.stall.check(now)
	if next > 0 {
		tu.stallTimer.Reset(next)
	}
	if tell {
		t.laneNotice(sysmsg.Stalled{For: tu.stall.after})
	}
}

// idleSince reports when the thread's agent became idle, if it has a live
// idle agent.
func (t *thread) idleSince() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc == nil || t.turn != nil || len(t.queue) > 0 {
		return time.Time{}, false
	}
	return t.idleAt, true
}

// armReaperLocked stops the agent after the idle timeout.
func (t *thread) armReaperLocked() {
	d := t.r.o.Limits.IdleTimeout
	if d <= 0 || t.proc == nil {
		return
	}
	if t.reaper != nil {
		t.reaper.Stop()
	}
	t.reaper = time.AfterFunc(d, func() {
		// Owned by the router like every goroutine: none after shutdown.
		if !t.r.enter() {
			return
		}
		defer t.r.wg.Done()
		t.reap("idle for " + d.String())
	})
}

// reap stops an idle agent process; the binding stays, so the next message
// resumes the session. It returns false if the agent was not idle.
func (t *thread) reap(why string) bool {
	t.mu.Lock()
	if t.proc == nil || t.turn != nil || len(t.queue) > 0 {
		t.mu.Unlock()
		return false
	}
	proc := t.proc
	w := t.dropProcessLocked()
	t.mu.Unlock()
	t.r.log.Info("stopping idle agent", "thread", t.ref, "why", why)
	ctx, cancel := context.WithTimeout(context.Background(), 4*t.r.o.Limits.StopGrace)
	defer cancel()
	if err := proc.Stop(ctx); err != nil {
		proc.Kill()
	}
	t.closeLogAfterExit(proc, w)
	return true
}

// shutdown cancels the running turn and stops the agent (gateway exit).
// A thread whose turn (or agent start) it cuts off is told so at once,
// straight through the adapter, within shutdownGrace; when that fails the
// turn's running mark stays in the store and the next start tells the
// thread. It reports whether it cut a turn off and stopped an agent.
func (t *thread) shutdown() (cut, stopped bool) {
	t.mu.Lock()
	t.shutting = true
	t.queue = nil
	tu, sess, proc := t.turn, t.sess, t.proc
	cut, stopped = tu != nil || t.starting, proc != nil
	if t.cancelStart != nil {
		t.cancelStart()
	}
	if t.reaper != nil {
		t.reaper.Stop()
	}
	t.mu.Unlock()
	// The lane has stopped with the router's context: what the thread
	// is told now goes straight to the adapter, within shutdownGrace.
	ctx, cancel := context.WithTimeout(context.Background(), t.r.shutdownGrace())
	defer cancel()
	told := false
	if cut {
		err := postWithin(ctx, t.ad, t.ref, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(sysmsg.Interrupted{})})
		if err != nil {
			t.r.log.Warn("cannot tell the thread its turn was interrupted; the next start does", "thread", t.ref, "err", err)
		}
		told = err == nil
	}
	for _, p := range t.allPending() {
		t.expireAtShutdown(ctx, p)
	}
	if tu != nil && sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = sess.Cancel(ctx)
		cancel()
		timer := time.NewTimer(t.r.o.Abort.Grace)
		select {
		case <-tu.finished:
		case <-timer.C:
			proc.Kill()
			<-tu.finished
		}
		timer.Stop()
	}
	if tu != nil && told {
		// After the turn's end: its mark was written before its prompt.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := t.r.o.Store.ClearTurnRunning(sctx, t.ref, tu.started); err != nil {
			t.r.log.Warn("cannot clear the turn's running mark", "thread", t.ref, "err", err)
		}
		cancel()
	}
	t.mu.Lock()
	proc = t.proc
	w := t.dropProcessLocked()
	t.mu.Unlock()
	t.stopProcess(proc, w)
	return cut, stopped || proc != nil
}

// stopProcess stops proc, a process the thread dropped, and then closes
// its event log w. Either may be nil.
func (t *thread) stopProcess(proc *agent.Process, w *eventlog.Writer) {
	if proc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 4*t.r.o.Limits.StopGrace)
		if err := proc.Stop(ctx); err != nil {
			proc.Kill()
		}
		cancel()
	}
	t.closeLogAfterExit(proc, w)
}
