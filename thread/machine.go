package thread

import (
	"fmt"
	"slices"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// Machine is the state of one thread, as a pure state machine: its queue,
// the start under way, the running turn and its stop, the pending
// permission prompts, the agent's phase, its idle time, and the shutdown.
// Apply takes an event and the time, and returns the effects to perform
// and when to call again (Tick); it does no I/O, reads no clock and
// starts nothing, so tests drive it on virtual time. It is not safe for
// concurrent use: the thread's owner goroutine is its only caller.
type Machine struct {
	cfg   MachineConfig
	queue []channels.Inbound
	// queuedSaid are the queued messages whose "Queued" notice was said,
	// to correct once they run or are dropped.
	queuedSaid map[channels.MessageID]bool
	agent      AgentPhase
	start      *starting // from taking a message off the queue until its turn began or its start ended
	turn       *running  // the running turn, nil when none
	prompts    []waiting // pending permission prompts, oldest first
	asks       []asking  // the agent's questions waiting, oldest first
	idleAt     time.Time // when the last turn ended
	reapAt     time.Time // when the idle agent is stopped; zero: not armed
	shutting   bool
	forgot     bool // the thread was deleted (Forget)
	// keepSession: the thread was archived, not deleted (Forget.Archived):
	// its session stays at the agent.
	keepSession bool
	exited      bool // Exit was given
	seq         int  // turns begun
	// evictAt is when the bare thread is dropped (zero: not armed);
	// checking: CheckLane was given and LaneIdle not yet applied.
	evictAt  time.Time
	checking bool
	// hold: a budget was reached; the queue waits for a Continue
	// (machine_budget.go). seqAsk numbers the Continue prompts.
	hold   *hold
	seqAsk int
	// The marks of accepted prompts and the ids taken
	// (machine_inbound.go).
	marks marks
}

// AgentPhase is where the thread's agent process is.
type AgentPhase uint8

// The phases of the agent process.
const (
	AgentNone     AgentPhase = iota // no process
	AgentStarting                   // being started (StartAgent)
	AgentReady                      // running, its session ready
	AgentExited                     // exited or killed while a turn ran; dropped at the turn's end
)

func (p AgentPhase) String() string {
	switch p {
	case AgentNone:
		return "none"
	case AgentStarting:
		return "starting"
	case AgentReady:
		return "ready"
	case AgentExited:
		return "exited"
	}
	return fmt.Sprintf("AgentPhase(%d)", uint8(p))
}

type starting struct {
	in       channels.Inbound
	deadline time.Time // the start timeout; zero until SlotTaken
	timedOut bool
	stop     *stopping
}

type running struct {
	in      channels.Inbound
	seq     int
	started time.Time
	stop    *stopping
	stall   stallWatch
	killAt  time.Time // the shutdown's kill; zero when not shutting down
	// rstall watches the silence for the stalled reaction; posted are
	// the messages posted while the turn runs (machine_react.go).
	rstall stallWatch
	posted map[channels.MessageID]bool
}

type stopping struct {
	by        string
	author    channels.Author
	interrupt bool
	ack       string
	deadline  time.Time // the kill, unless the turn ended
	killed    bool
}

type waiting struct {
	id      string
	expires time.Time
	options []string
}

// NewMachine returns the machine of an idle thread with no agent.
func NewMachine(cfg MachineConfig) *Machine {
	return &Machine{cfg: cfg}
}

// Apply applies e at now. It returns the effects to perform, in order,
// and the time of its next deadline (zero: none), at which the owner
// applies Tick.
func (m *Machine) Apply(now time.Time, e Event) (wake time.Time, effects []Effect) {
	var fx []Effect
	switch e := e.(type) {
	case Received:
		fx = m.received(now, e, fx)
	case PromptIn:
		fx = m.prompt(now, e, fx)
	case StopIn:
		if !m.shutting {
			fx = m.stop(now, stopBy{by: e.By, interrupt: e.Interrupt, all: e.All}, fx)
		}
	case SlotTaken:
		if s := m.start; s != nil && m.cfg.StartTimeout > 0 && s.deadline.IsZero() {
			s.deadline = now.Add(m.cfg.StartTimeout)
		}
	case AgentStarted:
		fx = m.started(now, e, fx)
	case TurnDone:
		fx = m.turnDone(now, e, fx)
	case AgentOutput:
		if tu := m.turn; tu != nil {
			tu.stall.output(now)
			if tu.rstall.output(now) && tu.stop == nil {
				fx = m.react(tu.in, channels.ReactTaken, false, fx)
			}
		}
	case ReactionStop:
		fx = m.reactionStop(now, e, fx)
	case Posted:
		m.turnPosted(e.ID)
	case ProcessExited:
		fx = m.agentExited(fx)
	case PermissionAsked:
		if allow, ok := byPolicy(m.cfg.Permissions, e.Kind); ok && !m.Stopped() {
			fx = append(fx, AnswerByPolicy{ID: e.ID, Allow: allow})
			break
		}
		if m.shutting || (m.turn != nil && m.turn.stop != nil) {
			// Asked after a stop (or the shutdown): nobody is shown the
			// question.
			fx = append(fx, SettlePrompt{ID: e.ID, Status: store.PromptCancelled, Unshown: true})
			break
		}
		m.prompts = append(m.prompts, waiting{id: e.ID, expires: now.Add(e.Timeout), options: e.Options})
		fx = append(fx, ShowPrompt{ID: e.ID})
	case PermissionAnswer:
		fx = m.answer(e, fx)
	case PermissionUnshown:
		if m.dropPrompt(e.ID) {
			fx = append(fx, SettlePrompt{ID: e.ID, Status: store.PromptCancelled, NotShown: true})
		}
	case PermissionWithdrawn:
		if m.dropPrompt(e.ID) {
			fx = append(fx, SettlePrompt{ID: e.ID, Status: store.PromptCancelled, By: channels.Author{Name: sysmsg.TheAgent}})
		}
	case QuestionAsked, QuestionAnswer, QuestionDone, QuestionUnshown, QuestionWithdrawn:
		fx = m.question(now, e, fx)
	case ReapIdle:
		fx = m.reap(e.Why, fx)
	case Shutdown:
		fx = m.shutdown(now, fx)
	case Forget:
		fx = m.forget(now, e.By, fx)
		m.keepSession = m.keepSession || e.Archived
	case BudgetReached:
		fx = m.budgetReached(now, e, fx)
	case ContinueIn:
		fx = m.continueIn(e, fx)
	case CommandIn:
		fx = m.command(e, fx)
	case SwitchAgent:
		if !m.shutting {
			fx = m.endSession(EndSession{By: e.By, Agent: e.Agent}, "/"+channels.CommandAgent, fx)
		}
	case AttachSession:
		if !m.shutting {
			fx = m.endSession(EndSession{By: e.By, Attach: e.ID}, "/"+channels.CommandAttach, fx)
		}
	case Tick:
	case Configure:
		m.cfg = e.Config
	case LaneIdle:
		if m.checking {
			m.checking = false
			if e.Idle && m.bare() {
				fx = append(fx, Evict{})
			}
		}
	default:
		panic(fmt.Errorf("session: unknown event %T", e))
	}
	fx = m.due(now, fx)
	fx = m.next(now, fx)
	fx = m.settleAccepted(fx)
	m.armEviction(now)
	return m.wake(), fx
}

// answer is someone's answer to a permission prompt.
func (m *Machine) answer(e PermissionAnswer, fx []Effect) []Effect {
	switch {
	case !m.Pending(e.ID):
		return append(fx, PromptNotWaiting{ID: e.ID})
	case !e.Approver:
		return append(fx, NotApprover{ID: e.ID})
	}
	m.dropPrompt(e.ID)
	return append(fx, SettlePrompt{ID: e.ID, Status: store.PromptAnswered, Option: e.Option, By: e.By})
}

// bare reports whether the thread holds nothing: no agent, no message
// running or queued, no prompt, no shutdown.
func (m *Machine) bare() bool {
	return m.agent == AgentNone && !m.Active() && len(m.queue) == 0 && len(m.prompts) == 0 && len(m.asks) == 0 && !m.shutting
}

// armEviction arms the eviction of a bare thread, and disarms it when
// the thread holds something again.
func (m *Machine) armEviction(now time.Time) {
	switch {
	case !m.bare():
		m.evictAt, m.checking = time.Time{}, false
	case m.evictAt.IsZero() && !m.checking && m.cfg.EvictAfter > 0:
		m.evictAt = now.Add(m.cfg.EvictAfter)
	}
}

// prompt queues a message under the busy policy.
func (m *Machine) prompt(now time.Time, e PromptIn, fx []Effect) []Effect {
	if m.shutting {
		return fx
	}
	active := m.Active()
	ahead := len(m.queue)
	m.queue = append(m.queue, e.In)
	if active || ahead > 0 {
		fx = m.react(e.In, channels.ReactQueued, false, fx)
	}
	switch {
	case active && m.cfg.Busy == BusyInterrupt:
		fx = m.stop(now, stopBy{by: e.In.Author, interrupt: true}, fx)
	case (active || ahead > 0) && !e.Caught:
		if active {
			ahead++
		}
		stopping := m.turn != nil && m.turn.stop != nil || m.start != nil && m.start.stop != nil
		n := Notify{Notice: sysmsg.Queued{Ahead: ahead, Stopping: stopping}}
		if e.In.ID != "" {
			if m.queuedSaid == nil {
				m.queuedSaid = map[channels.MessageID]bool{}
			}
			m.queuedSaid[e.In.ID] = true
			n.Key = queuedKey(e.In)
		}
		fx = append(fx, n)
	}
	return fx
}

// stopBy is who stops, and how: interrupt, a new message under the
// interrupt policy (the queue kept, nothing said of it); all, the queue
// dropped too.
type stopBy struct {
	by        channels.Author
	interrupt bool
	all       bool
}

// stop is the cancel contract (package abort): pending prompts are
// cancelled; a running turn is cancelled and its agent killed after the
// grace period; a start under way is given up. The queued messages stay
// (the one who stopped is told) and run next, unless s.all drops them.
func (m *Machine) stop(now time.Time, s stopBy, fx []Effect) []Effect {
	by, interrupt := s.by, s.interrupt
	dropped := 0
	if s.all && !interrupt {
		dropped = len(m.queue)
		for _, in := range m.queue {
			fx = m.react(in, channels.ReactStopped, false, fx)
			fx = m.settleQueued(in, sysmsg.QueuedDropped{}, fx)
		}
		m.queue = nil
	}
	st := &stopping{by: displayName(by), author: by, interrupt: interrupt}
	switch {
	case m.turn != nil && m.turn.stop == nil:
		tu := m.turn
		st.ack = fmt.Sprintf("stop-%d", tu.seq)
		st.deadline = now.Add(m.cfg.Grace)
		tu.stop = st
		// Said at once, whatever the agent does with the cancel.
		fx = append(fx, Notify{Notice: sysmsg.Stopping{By: st.by, Interrupt: st.interrupt}, Key: st.ack})
		fx = m.cancelPrompts(by, fx)
		fx = append(fx, StopTyping{}, CancelTurn{})
	case m.turn != nil:
		fx = m.cancelPrompts(by, fx) // a second stop while the first is in progress
	case m.start != nil && m.start.stop == nil:
		m.start.stop = st
		fx = append(fx, CancelStart{})
		fx = m.cancelPrompts(by, fx)
		fx = append(fx, StopTyping{}) // AgentStarted tells the thread
	case m.start != nil:
		fx = m.cancelPrompts(by, fx)
	default:
		fx = m.cancelPrompts(by, fx)
		if !interrupt {
			fx = append(fx, Notify{Notice: sysmsg.NothingRunning{Dropped: dropped}})
		}
	}
	if !interrupt && len(m.queue) > 0 {
		fx = append(fx, QueueKept{Waiting: len(m.queue)})
	}
	return fx
}

func (m *Machine) cancelPrompts(by channels.Author, fx []Effect) []Effect {
	for _, p := range m.prompts {
		fx = append(fx, SettlePrompt{ID: p.id, Status: store.PromptCancelled, By: by})
	}
	m.prompts = nil
	return m.cancelQuestions(by, fx)
}

// started ends a start: the turn begins, or the thread is told why not.
func (m *Machine) started(now time.Time, e AgentStarted, fx []Effect) []Effect {
	s := m.start
	if s == nil {
		return fx
	}
	m.start = nil
	if e.Err != nil {
		if m.agent == AgentStarting {
			m.agent = AgentNone
		}
		fx = append(fx, StopTyping{})
		switch {
		case s.stop != nil:
			fx = m.react(s.in, channels.ReactStopped, false, fx)
			if !s.stop.interrupt {
				fx = append(fx, Notify{Notice: sysmsg.StoppedBeforeStart{By: s.stop.by}})
			}
		case s.timedOut:
			fx = m.react(s.in, channels.ReactFailed, false, fx)
			fx = append(fx, Notify{Notice: sysmsg.StartTimeout{After: m.cfg.StartTimeout}})
		case m.shutting:
		case e.Workspace:
			fx = append(fx, Notify{Notice: sysmsg.WorkspaceFailed{Err: e.Err.Error()}})
		default:
			fx = m.react(s.in, channels.ReactFailed, false, fx)
			fx = append(fx, Notify{Notice: startFailed(e.Err)})
		}
		return fx
	}
	m.agent = AgentReady
	switch {
	case s.stop != nil:
		// Stopped while the agent was starting: the prompt never runs.
		fx = m.react(s.in, channels.ReactStopped, false, fx)
		if !s.stop.interrupt {
			fx = append(fx, Notify{Notice: sysmsg.StoppedBeforeStart{By: s.stop.by}})
		}
		m.idle(now)
	case m.shutting:
		// The prompt never runs (the shutdown tells the thread).
		m.agent = AgentNone
		fx = append(fx, StopAgent{Why: "shutdown"})
	default:
		m.seq++
		m.turn = &running{in: s.in, seq: m.seq, started: now}
		if m.cfg.StallTimeout > 0 {
			m.turn.stall = stallWatch{after: m.cfg.StallTimeout, last: now}
		}
		if m.cfg.Reactions && m.cfg.ReactStallAfter > 0 {
			m.turn.rstall = stallWatch{after: m.cfg.ReactStallAfter, last: now}
		}
		m.reapAt = time.Time{}
		key, marked := m.marks.taken(s.in, now)
		fx = append(fx, BeginTurn{In: s.in, Seq: m.seq, At: now, Mark: key, Marked: marked})
	}
	return fx
}

// turnDone closes the running turn.
func (m *Machine) turnDone(now time.Time, e TurnDone, fx []Effect) []Effect {
	tu := m.turn
	if tu == nil {
		return fx
	}
	m.turn = nil
	out := TurnOutcome{Seq: tu.seq, Started: tu.started, StopReason: e.StopReason, Err: e.Err, Exited: e.Exited, Cut: m.shutting && !m.forgot, Forgotten: m.forgot}
	if st := tu.stop; st != nil {
		out.Stopper, out.Interrupted, out.Killed, out.Ack = st.by, st.interrupt, st.killed, st.ack
	}
	fx = append(fx, EndTurn{Turn: out})
	if !out.Cut && !out.Forgotten {
		fx = m.react(tu.in, endMark(out), true, fx)
	}
	if e.Exited || m.agent == AgentExited {
		m.agent = AgentNone
		fx = append(fx, DropAgent{})
	}
	m.idle(now)
	return fx
}

// idle notes that the thread became idle at now and arms the reaper.
func (m *Machine) idle(now time.Time) {
	m.idleAt = now
	m.reapAt = time.Time{}
	if m.agent == AgentReady && m.cfg.IdleTimeout > 0 {
		m.reapAt = now.Add(m.cfg.IdleTimeout)
	}
}

func (m *Machine) agentExited(fx []Effect) []Effect {
	switch {
	case m.agent != AgentReady:
	case m.turn != nil:
		m.agent = AgentExited // TurnDone follows
	default:
		m.agent = AgentNone
		m.reapAt = time.Time{}
		fx = append(fx, DropAgent{})
	}
	return fx
}

// reap stops an idle agent.
func (m *Machine) reap(why string, fx []Effect) []Effect {
	if _, ok := m.IdleSince(); !ok {
		return fx
	}
	m.agent = AgentNone
	m.reapAt = time.Time{}
	return append(fx, StopAgent{Why: why})
}

// shutdown cuts the thread off: queue dropped, start given up, turn
// cancelled (its agent killed after the grace period), prompts expired.
func (m *Machine) shutdown(now time.Time, fx []Effect) []Effect {
	if m.shutting {
		return fx
	}
	m.shutting = true
	m.queue = nil
	m.reapAt = time.Time{}
	if m.start != nil {
		fx = append(fx, CancelStart{})
	}
	if m.turn != nil || m.start != nil {
		fx = append(fx, TellInterrupted{})
	}
	for _, p := range m.prompts {
		fx = append(fx, SettlePrompt{ID: p.id, Status: store.PromptExpired, Shutdown: true})
	}
	m.prompts = nil
	fx = m.shutQuestions(fx)
	if m.turn != nil {
		m.turn.killAt = now.Add(m.cfg.Grace)
		fx = append(fx, CancelTurn{})
	}
	return fx
}

// forget ends a deleted thread silently: queue dropped, start given up,
// turn stopped (its agent killed after the grace period), prompts
// cancelled; the shutdown's end follows once nothing runs.
func (m *Machine) forget(now time.Time, by channels.Author, fx []Effect) []Effect {
	if m.shutting {
		return fx
	}
	m.shutting, m.forgot = true, true
	m.queue = nil
	m.reapAt = time.Time{}
	if m.start != nil {
		fx = append(fx, CancelStart{})
	}
	fx = m.cancelPrompts(by, fx)
	if tu := m.turn; tu != nil && tu.stop == nil {
		// What the agent still says is not shown. Nobody (Router.Disown:
		// another worker has the thread) is not named in the thread.
		name := ""
		if by.ID != "" || by.Name != "" {
			name = displayName(by)
		}
		tu.stop = &stopping{by: name, author: by, deadline: now.Add(m.cfg.Grace)}
		fx = append(fx, CancelTurn{})
	}
	return fx
}

// due performs what falls due at now: prompts expire, stopped agents are
// killed, silences told, starts given up, idle agents stopped; and the
// shutdown ends once nothing runs.
func (m *Machine) due(now time.Time, fx []Effect) []Effect {
	for len(m.prompts) > 0 {
		i := m.firstExpiry()
		if now.Before(m.prompts[i].expires) {
			break
		}
		id := m.prompts[i].id
		m.dropPrompt(id)
		fx = append(fx, SettlePrompt{ID: id, Status: store.PromptExpired})
	}
	if tu := m.turn; tu != nil {
		if st := tu.stop; st != nil && !st.killed && !now.Before(st.deadline) {
			st.killed = true
			m.agent = AgentExited
			fx = append(fx, KillAgent{})
		}
		if !tu.killAt.IsZero() && !now.Before(tu.killAt) {
			tu.killAt = time.Time{}
			m.agent = AgentExited
			fx = append(fx, KillAgent{})
		}
		if tu.stall.after > 0 {
			if len(m.prompts) > 0 || len(m.asks) > 0 {
				// Waiting for people is not the agent's silence.
				tu.stall.output(now)
			}
			if tell, _ := tu.stall.check(now); tell {
				fx = append(fx, Notify{Notice: sysmsg.Stalled{For: tu.stall.after}, InTurn: true})
			}
		}
		if tu.rstall.after > 0 {
			if len(m.prompts) > 0 {
				tu.rstall.output(now) // waiting for people is no stall
			}
			if tell, _ := tu.rstall.check(now); tell && tu.stop == nil {
				fx = m.react(tu.in, channels.ReactStalled, false, fx)
			}
		}
	}
	// After the stall watch, which counts the wait for people until now.
	fx = m.expireQuestions(now, fx)
	if s := m.start; s != nil && !s.timedOut && s.stop == nil && !s.deadline.IsZero() && !now.Before(s.deadline) {
		s.timedOut = true
		fx = append(fx, CancelStart{Timeout: true})
	}
	if !m.reapAt.IsZero() && !now.Before(m.reapAt) {
		fx = m.reap("idle for "+m.cfg.IdleTimeout.String(), fx)
	}
	if !m.evictAt.IsZero() && !now.Before(m.evictAt) && m.bare() {
		m.evictAt, m.checking = time.Time{}, true
		fx = append(fx, CheckLane{})
	}
	if m.shutting && !m.exited && m.turn == nil && m.start == nil {
		m.exited = true
		if m.agent != AgentNone {
			m.agent = AgentNone
			fx = append(fx, StopAgent{Why: "shutdown", End: m.forgot && !m.keepSession})
		}
		fx = append(fx, Exit{})
	}
	return fx
}

// next takes the next message off the queue when nothing runs.
func (m *Machine) next(now time.Time, fx []Effect) []Effect {
	if m.shutting || m.Active() || len(m.queue) == 0 {
		return fx
	}
	var held bool
	if held, fx = m.held(fx); held {
		return fx
	}
	in := m.queue[0]
	m.queue = m.queue[1:]
	m.start = &starting{in: in}
	m.reapAt = time.Time{}
	need := m.agent != AgentReady
	if m.agent == AgentNone {
		m.agent = AgentStarting
	}
	fx = m.react(in, channels.ReactTaken, false, fx)
	fx = m.settleQueued(in, sysmsg.QueuedRan{}, fx)
	return append(fx, StartAgent{In: in, NeedProcess: need})
}

// queuedKey names the "Queued" notice of message in.
func queuedKey(in channels.Inbound) string { return "queued-" + string(in.ID) }

// settleQueued corrects the "Queued" notice of in, if one was said, to n.
func (m *Machine) settleQueued(in channels.Inbound, n sysmsg.Notice, fx []Effect) []Effect {
	if !m.queuedSaid[in.ID] {
		return fx
	}
	delete(m.queuedSaid, in.ID)
	return append(fx, Notify{Notice: n, Key: queuedKey(in), Settle: true})
}

// wake returns the earliest deadline, zero if none.
func (m *Machine) wake() time.Time {
	var w time.Time
	at := func(t time.Time) {
		if !t.IsZero() && (w.IsZero() || t.Before(w)) {
			w = t
		}
	}
	if len(m.prompts) > 0 {
		at(m.prompts[m.firstExpiry()].expires)
	}
	if tu := m.turn; tu != nil {
		if st := tu.stop; st != nil && !st.killed {
			at(st.deadline)
		}
		at(tu.killAt)
		if tu.stall.after > 0 && !tu.stall.told {
			at(tu.stall.last.Add(tu.stall.after))
		}
		if tu.rstall.after > 0 && !tu.rstall.told {
			at(tu.rstall.last.Add(tu.rstall.after))
		}
	}
	if s := m.start; s != nil && !s.timedOut && s.stop == nil {
		at(s.deadline)
	}
	at(m.questionWake())
	at(m.reapAt)
	at(m.evictAt)
	return w
}

func (m *Machine) firstExpiry() int {
	first := 0
	for i, p := range m.prompts {
		if p.expires.Before(m.prompts[first].expires) {
			first = i
		}
	}
	return first
}

func (m *Machine) dropPrompt(id string) bool {
	for i, p := range m.prompts {
		if p.id == id {
			m.prompts = append(m.prompts[:i], m.prompts[i+1:]...)
			return true
		}
	}
	return false
}

// Active reports whether a message is being run: from taking it off the
// queue until its turn ended (the agent may still be starting).
func (m *Machine) Active() bool { return m.start != nil || m.turn != nil }

// byPolicy reports how policy answers a request for a tool of kind
// without asking anyone (allow or reject); false: people are asked.
func byPolicy(policy, kind string) (allow, ok bool) {
	switch policy {
	case PermissionApproveAll:
		return true, true
	case PermissionDenyAll:
		return false, true
	case PermissionApproveReads:
		switch kind {
		case "read", "search", "think":
			return true, true
		}
	}
	return false, false
}

// Stopped reports whether the running turn has been stopped: what the
// agent still says is recorded, not shown.
func (m *Machine) Stopped() bool { return m.turn != nil && m.turn.stop != nil }

// Pending reports whether prompt id waits for an answer.
func (m *Machine) Pending(id string) bool {
	for _, p := range m.prompts {
		if p.id == id {
			return true
		}
	}
	return false
}

// OldestPrompt returns the id of the oldest pending prompt, "" if none.
func (m *Machine) OldestPrompt() string {
	if len(m.prompts) == 0 {
		return ""
	}
	return m.prompts[0].id
}

// Agent returns the agent's phase.
func (m *Machine) Agent() AgentPhase { return m.agent }

// Queued returns how many messages wait.
func (m *Machine) Queued() int { return len(m.queue) }

// Holds reports whether in waits in the queue or is being started.
func (m *Machine) Holds(in channels.Inbound) bool {
	if m.start != nil && samePrompt(m.start.in, in) {
		return true
	}
	return slices.ContainsFunc(m.queue, func(q channels.Inbound) bool { return samePrompt(q, in) })
}

// IdleSince reports when the thread's agent became idle, if it has a live
// idle agent.
func (m *Machine) IdleSince() (time.Time, bool) {
	if m.agent != AgentReady || m.Active() || len(m.queue) > 0 || m.shutting {
		return time.Time{}, false
	}
	return m.idleAt, true
}

// Exited reports whether the thread is done (Exit was given).
func (m *Machine) Exited() bool { return m.exited }

// ShuttingDown reports whether the machine was told of a shutdown.
func (m *Machine) ShuttingDown() bool { return m.shutting }

// Grace is how long a stopped turn is given to end (MachineConfig.Grace).
func (m *Machine) Grace() time.Duration { return m.cfg.Grace }
