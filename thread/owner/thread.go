package owner

import (
	"context"
	"errors"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// thread owns one chat thread: its queue, its agent session, its
// projector and its delivery lane. Its state belongs to its owner
// goroutine (run, owner.go); others send events to its inbox.
type Thread struct {
	d      Deps
	ref    channels.ThreadRef
	space  string
	ad     channels.Adapter
	runner *dispatch.Runner
	reacts *dispatch.ReactRunner // nil where the adapter has no reactions
	inbox  inbox
	// ctx is the thread's context: it outlives the router's (a thread
	// stops its turn and tells so at shutdown) and ends once the owner
	// has returned, at a shutdown only after its grace (Router.shutdown).
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the owner returned
	// idle is when the thread's live agent became idle (Unix ns), 0 when
	// it has none idle; the owner publishes it for Router.reapIdle.
	idle atomic.Int64
	// recording holds, per turn whose end is on its way through the
	// lane, a channel closed once the turn's records are written (only
	// with Options.OnTurnEnd, which waits for them).
	recording chan chan struct{}
	// saves performs the thread's store writes (saves.go).
	saves *saves
	// opens records the running turn's open messages (handles.go).
	opens openRecorder
	// ended holds, per turn whose end is on its way through the lane,
	// the key of its prompt's mark, cleared once the lane delivered the
	// end (zero: a mark that stays) (marks.go).
	ended endedMarks

	// Owned by the owner goroutine: nothing else reads or writes these.
	m           *thread.Machine
	wake        time.Time // the machine's next deadline
	proj        *projector.Projector
	policy      Policy
	proc        *agent.Process
	sess        *agent.Session
	slot        bool // holds one of the router's process slots
	evlog       FrameLog
	tr          *store.Transcript
	prompts     map[string]*pending
	cancelStart context.CancelFunc // the start under way
	files       []channels.File    // the started message's files
	cur         *turn              // the running turn
	replyTo     *channels.Inbound  // the click being answered
	told        bool               // the shutdown told the thread its turn was cut off
	evicted     bool               // dropped from the router (Evict): the owner returns
	// What the shutdown did, read by Router.shutdown once done is closed.
	cut, stopped bool

	// cwd is the session's working directory, for permission prompts.
	cwd string
	// workspace is cwd for the lane's goroutine, which reads the image
	// files the agent links to (images.go).
	workspace atomic.Pointer[string]
	// mcp is the thread's MCP server (nil: none), closed when the owner
	// returns.
	mcp *mcpgate.Server
	// context is the quoted context of the thread's first prompt
	// (sysmsg.Backfill), "" when none is due.
	context string
	// cmd is what the gateway's commands need (commands.go).
	cmd commandState
	// envTold are the variables a notice said the agent was started
	// without (tellWithheld).
	envTold map[string]bool
	// pick is the agent the thread's first message picked
	// (Inbound.Agent), for a thread not bound yet; "" = the policy's.
	pick string
	// questions are the agent's questions waiting (question.go).
	questions map[string]*question
	// earlyAnswers are form answers that came while a form was still on
	// its way (its message id not known yet): they are tried again when
	// it is shown (question.go).
	earlyAnswers []formEv
	// cost counts the session's cost from the agent's reports (cost.go).
	cost costMeter
}

// records is the context of the thread's store writes: the thread's
// without its end, since a record is not given up because the thread
// ended while it was written (each write has its own timeout).
func (t *Thread) records() context.Context { return context.WithoutCancel(t.ctx) }

// reply answers in privately where the platform can, else in the
// thread, through the lane (ahead of the turn's output, retried while the
// platform is unreachable).
func (t *Thread) reply(in channels.Inbound, n sysmsg.Notice) {
	if in.Reply != nil {
		t.runner.Reply(n.Body(), in.Reply) // a private answer goes unmarked
		return
	}
	t.runner.Reply(sysmsg.Text(n), nil)
}

// turn is what the owner keeps of the running turn for its records.
type turn struct {
	started time.Time
	mark    time.Time // the key of its prompt's mark (marks.go)
	prompt  string
	sess    *agent.Session
	budget  budgetBase // what the turn's budgets start from
}

// newThread returns a thread's owner; the caller starts its run loop.
func New(d Deps, cfg thread.MachineConfig, ref channels.ThreadRef, space string, ad channels.Adapter, policy Policy) *Thread {
	t := &Thread{
		d:         d,
		ref:       ref,
		space:     space,
		ad:        ad,
		inbox:     newInbox(),
		done:      make(chan struct{}),
		recording: make(chan chan struct{}, 64),
		prompts:   map[string]*pending{},
		questions: map[string]*question{},
	}
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(d.Ctx))
	t.saves = newSaves(d.Log, ref, t.records())
	t.policy = policy
	t.m = thread.NewMachine(cfg)
	t.proj = projector.New(t.policy.Stream)
	var obs dispatch.Observer
	if d.Observer != nil {
		obs = d.Observer(ref.Platform)
	}
	lane := dispatch.NewLane(dispatch.Options{
		Observer: obs,
		Adapter:  ad,
		Thread:   ref,
		Stream:   t.policy.Stream,
		Typing:   t.policy.Typing,
		Logger:   d.Log,
		RetryFor: d.Delivery.RetryFor,
		// For stop reactions on the running turn's messages.
		OnPosted: func(h channels.Handle) { t.inbox.event(thread.Posted{ID: h.ID}) },
		// Kept where the thread's next owner finds them (handles.go).
		OnOpen:   func(o []dispatch.Open) { t.opens.report(t, o) },
		ReadFile: t.readImage,
		OnTurnEnd: func(e projector.TurnEnd) {
			t.delivered()
			if d.OnTurnEnd == nil {
				return
			}
			// Delivered; announce it once the turn's records are
			// written too, so that whoever hears of it finds them.
			// (Only tests set the hook: this lane waits for the
			// thread's saves meanwhile.)
			var recorded chan struct{}
			select {
			case recorded = <-t.recording:
			default:
			}
			if recorded != nil {
				select {
				case <-recorded:
				case <-d.Ctx.Done():
				}
			}
			// And the mark's end, asked for above.
			marked := make(chan struct{})
			t.saves.after(func() { close(marked) })
			select {
			case <-marked:
			case <-d.Ctx.Done():
			}
			d.OnTurnEnd(ref, e)
		},
	})
	t.runner = dispatch.Start(d.Ctx, lane)
	t.proj.SetCanEdit(t.runner.Caps().Edit)
	t.reacts = startReactions(d.Ctx, ad, ref, d.Log)
	return t
}

// notice posts a system line right away, outside the turn's order: it
// answers someone's message now (queued, waiting, stopped, could not
// start), so it must not wait behind the turn's text, which a final_only
// turn holds until its end and a long answer paces out. It goes through
// the thread's lane as an urgent notice (dispatch.Lane.Notice), so it is
// delivered as durably as any output: rate limits waited out, outages
// retried for delivery.retryFor, in order with the thread's other
// notices.
func (t *Thread) notice(n sysmsg.Notice) {
	t.runner.Notice("", sysmsg.Text(n))
}

// patiently calls try until it succeeds, waiting out rate limits as
// the platform asks and an unreachable platform with a backoff (1 s
// doubling to 30 s); it gives up on an error the platform will repeat
// (channels.IsPermanent), after retryFor, or when ctx ends. It blocks;
// callers run it on a goroutine the router owns. It is for answers that
// have no thread lane (a refusal), which must not be lost any more than
// a lane's output.
func Patiently(ctx context.Context, retryFor time.Duration, try func(context.Context) error) error {
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
		if !Sleep(ctx, wait) {
			return err
		}
	}
}

// laneNotice posts a system line in order with the turn's output.
func (t *Thread) laneNotice(n sysmsg.Notice) {
	t.runner.Push(projector.Notice{Text: sysmsg.Text(n)})
}

// beginTurn sets the turn of in up and sends its prompt; the call's end
// comes back as a turnDoneEv.
func (t *Thread) beginTurn(f thread.BeginTurn) {
	in, at := f.In, f.At
	sess := t.sess
	policy := t.d.Host.PolicyFor(t.ref, t.space)
	t.policy = policy
	t.apply(thread.Configure{Config: t.d.Host.MachineConfig(policy)})
	files := t.files
	prompt, pics := attach.Prompt(in.Text, files, sess.Process().TakesImages())
	t.files = nil
	if t.context != "" {
		prompt = t.context + "\n" + prompt
		t.context = ""
	}
	images := make([]agent.Image, len(pics))
	for i, f := range pics {
		images[i] = agent.Image{MimeType: f.ContentType, Data: f.Data}
	}
	t.cur = &turn{started: at, prompt: prompt, sess: sess, budget: t.budgetBaseFor(at, sess.ID)}
	t.proj.SetSettings(policy.Stream)
	// The adapter's capabilities may have changed since the thread's
	// last turn (channels.CapsReporter); the lane reads them again too.
	t.proj.SetCanEdit(t.runner.Caps().Edit)
	t.runner.Do(func(l *dispatch.Lane) { l.SetStream(policy.Stream) })
	t.tr.UserPrompt(prompt, at)
	t.view().BeginTurn()
	if !f.Marked {
		t.markRunning(f.Mark, sess.ID, in, files)
	}
	t.cur.mark = f.Mark
	t.d.WG.Go(func() {
		// Not the router's context: cancelling the Prompt's context
		// makes the SDK drop the agent's answer. Stops go through
		// session/cancel; shutdown too.
		sess.PromptThen(context.WithoutCancel(t.d.Ctx), prompt, images, func(stop string, err error) {
			t.inbox.send(turnDoneEv{stop: stop, err: err})
		})
	})
}

// endTurn closes the turn: projector, lane, records.
func (t *Thread) endTurn(o thread.TurnOutcome) {
	tu := t.cur
	t.cur = nil
	sess := tu.sess
	err := o.Err
	stop, errText := thread.TurnEnd(o)
	now := time.Now()
	turnRec := store.Turn{
		Thread: t.ref, SessionID: sess.ID, Seq: o.Seq, StopReason: stop, Error: errText,
		Started: tu.started, Ended: now,
		PromptChars: len([]rune(tu.prompt)), ReplyChars: len([]rune(t.proj.TurnText())),
	}
	if u, frames := t.proj.TurnUsage(); frames > 0 {
		turnRec.Used, turnRec.Size, turnRec.UsedKnown, turnRec.SizeKnown = u.Used, u.Size, u.UsedKnown, u.SizeKnown
		turnRec.Cost, turnRec.Currency, turnRec.CostKnown = u.Cost, u.Currency, u.CostKnown
	}
	recorded := make(chan struct{})
	if t.d.OnTurnEnd != nil { // only the hook waits for the records
		select {
		case t.recording <- recorded:
		default: // very far behind: the hook does not wait
		}
	}
	// The mark goes once the lane delivered the turn's end; a turn the
	// shutdown cut off keeps it unless the thread was told (a deleted
	// thread's too: nobody is left to tell), which clears it now.
	clearNow := false
	switch {
	case !t.proj.InTurn():
		// No turn's end goes through the lane: none to wait for.
		if !o.Cut {
			clearNow = true
		}
	case o.Cut:
		t.ended.push(time.Time{})
	default:
		t.ended.push(tu.mark)
	}
	t.view().EndTurn(o, stop, errText, t.m.Grace(), now.Sub(tu.started))
	dirty := t.tr.Dirty()
	t.tr.MarkClean()
	title := t.proj.Title()
	evlog := t.evlog
	if f := t.d.OnTurnFinished; f != nil {
		f(t.ref, stop, err)
	}
	// An agent idle now gives way to a thread waiting for a slot (not
	// on the owner: the reaped agent may be this thread's).
	t.d.WG.Go(t.d.Host.GiveWay)

	// Through the thread's saves, in this order; the hook hears of the
	// turn's end once the turn and its transcript are written.
	st, ref, log := t.d.Store, t.ref, t.d.Log
	t.saves.write("", "the turn", func(ctx context.Context) error { return st.AddTurn(ctx, turnRec) },
		func(err error) { log.Error("cannot record the turn", "thread", ref, "err", err) })
	t.saves.write("", "the transcript", func(ctx context.Context) error { return st.SaveEntries(ctx, sess.ID, dirty) },
		func(err error) { log.Error("cannot save the transcript", "thread", ref, "err", err) })
	t.saves.after(func() { close(recorded) })
	if clearNow || (o.Cut && t.told) {
		t.unmark(tu.mark, "cannot clear the turn's running mark")
	}
	if title != "" {
		t.saveTitle(title)
	}
	if evlog != nil {
		if err := evlog.Sync(); err != nil && !errors.Is(err, fs.ErrClosed) {
			t.d.Log.Warn("cannot sync the event log", "thread", t.ref, "err", err)
		}
	}
}

// update is an update from the agent's tap (Update).
func (t *Thread) update(u projector.Update, history bool) {
	if u.Child != "" {
		t.childUpdate(u, history)
		return
	}
	t.noteOptions(u)
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
	t.apply(thread.AgentOutput{})
	if t.m.Stopped() {
		// Stopped: what the agent still says is recorded, not shown.
		if f := t.d.OnUpdate; f != nil {
			tag := u.RawTag
			if tag == "" {
				tag = u.Tag.String()
			}
			f(tag, "stopped")
		}
		return
	}
	if (u.Tag == projector.TagToolCall || u.Tag == projector.TagToolCallUpdate) && t.runner.Caps().ToolDetail {
		t.runner.ToolDetail(string(u.Tool.ID), toolDetail(u.Tool))
	}
	t.meterCost(&u)
	t.view().Update(&u, false)
	if u.Tag == projector.TagSubagent {
		t.subagentDetail(u.Subagent.ID)
	}
	t.compactionDetail(&u)
	t.checkBudgets(&u)
	switch u.Tag {
	case projector.TagConfigOption, projector.TagCurrentMode, projector.TagAvailableCommands, projector.TagUsage:
		t.showSession()
	}
	if f := t.d.OnUpdate; f != nil {
		tag := u.RawTag
		if tag == "" {
			tag = u.Tag.String()
		}
		f(tag, t.proj.Suppressed())
	}
}

// Update is the agent's Handler: the tap's goroutine hands every update
// over to the owner. It never blocks.
func (t *Thread) Update(u projector.Update, history bool) {
	t.inbox.send(updateEv{u: u, history: history})
}

// stopProcess stops proc, a process the thread dropped, and then closes
// its event log w. Either may be nil. It blocks.
// endAgentSession tells the agent that the thread's session is over for
// good (the thread was deleted): session/delete and session/close where
// the agent advertises them, each bounded by the stop grace.
func (t *Thread) endAgentSession(sess *agent.Session) {
	ctx, cancel := context.WithTimeout(t.d.Ctx, 2*t.d.Limits.StopGrace)
	defer cancel()
	if err := sess.End(ctx); err != nil {
		t.d.Log.Warn("cannot end the deleted thread's session at the agent", "thread", t.ref, "session", sess.ID, "err", err)
	}
}

// saveTitle keeps title as the session's (through the thread's saves)
// and gives the thread that name where the platform names threads.
func (t *Thread) saveTitle(title string) {
	st, ref, log, runner := t.d.Store, t.ref, t.d.Log, t.runner
	t.saves.write("", "the session's title", func(ctx context.Context) error {
		b, ok, err := st.Binding(ctx, ref)
		if err != nil || !ok || b.Title == title {
			return err
		}
		b.Title = title
		if err := st.PutBinding(ctx, b); err != nil {
			return err
		}
		runner.SetTitle(title)
		return nil
	}, func(err error) { log.Error("cannot save the session's title", "thread", ref, "err", err) })
}

func (t *Thread) stopProcess(proc *agent.Process, w FrameLog) {
	if proc != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), 4*t.d.Limits.StopGrace)
		if err := proc.Stop(ctx); err != nil {
			proc.Kill()
		}
		cancel()
	}
	t.closeLogAfterExit(proc, w)
}

// view is what the owner shows people through: the thread's projector
// and lane (shared with `gateway replay`, view.go).
func (t *Thread) view() thread.View { return thread.RunnerView(t.proj, t.runner) }
