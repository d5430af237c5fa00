package session

// The thread's agent process: starting it (or resuming its session),
// its event log, and watching it exit.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// errStartTimeout: the agent took longer than Limits.StartTimeout to start.
var errStartTimeout = errors.New("the agent did not start in time")

// start prepares the turn of in: it downloads the message's files
// (Inbound.Fetch) and runs ensureSession within Limits.StartTimeout. A
// stop (cancelStart) aborts both.
func (t *thread) start(ctx context.Context, in channels.Inbound) (*agent.Session, []channels.File, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	t.mu.Lock()
	t.cancelStart = stop
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.cancelStart = nil
		t.mu.Unlock()
	}()
	files := in.Files
	if in.Fetch != nil {
		files = in.Fetch(ctx)
	}
	// A new agent process needs a slot; waiting for one (in line with
	// other threads) does not count against the start timeout.
	held := false
	if t.needsProcess() {
		if err := t.r.acquire(ctx, t); err != nil {
			return nil, files, err
		}
		held = true
	}
	sctx, cancel := context.WithTimeoutCause(ctx, t.r.startTimeout(), errStartTimeout)
	defer cancel()
	sess, err := t.ensureSession(sctx, held)
	if err != nil && errors.Is(context.Cause(sctx), errStartTimeout) {
		err = fmt.Errorf("%w: %w", errStartTimeout, err)
	}
	return sess, files, err
}

// needsProcess reports whether the thread has no live agent session.
func (t *thread) needsProcess() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sess == nil || t.proc.Err() != nil
}

// ensureSession returns a live session, starting the agent and creating or
// resuming its session as needed. held says that the caller took a
// process slot for it (acquire); ensureSession keeps it for the new
// process or gives it back.
func (t *thread) ensureSession(ctx context.Context, held bool) (*agent.Session, error) {
	t.mu.Lock()
	if t.sess != nil && t.proc.Err() == nil {
		s := t.sess
		t.mu.Unlock()
		if held {
			t.r.release()
		}
		return s, nil
	}
	var gone *agent.Process // exited
	var goneLog *eventlog.Writer
	if t.proc != nil {
		gone = t.proc
		goneLog = t.dropProcessLocked()
	}
	t.mu.Unlock()
	t.closeLogAfterExit(gone, goneLog)
	if !held {
		if err := t.r.acquire(ctx, t); err != nil {
			return nil, err
		}
	}

	st := t.r.o.Store
	b, bound, err := st.Binding(ctx, t.ref)
	if err != nil {
		t.r.release()
		return nil, fmt.Errorf("read the thread's binding: %w", err)
	}
	name := b.Agent
	if !bound || name == "" {
		name = t.r.policyFor(t.ref, t.space).Agent
		t.mu.Lock()
		if t.pick != "" {
			name = t.pick
		}
		t.mu.Unlock()
	}
	spec, ok := t.r.agentSpec(name)
	if !ok {
		spec, ok = t.r.agentSpec("")
		if !ok {
			t.r.release()
			return nil, errors.New("no agent is configured")
		}
	}
	proc, err := agent.Start(ctx, spec, agent.Options{Logger: t.r.log.With("thread", t.ref), StopGrace: t.r.o.Limits.StopGrace, Registry: t.r.o.Registry})
	if err != nil {
		t.r.release()
		return nil, err
	}
	cwd := b.Cwd
	if cwd == "" {
		cwd = t.r.cwd(spec)
	}
	var sess *agent.Session
	if bound && b.SessionID != "" && proc.CanLoad() {
		sess = t.resume(ctx, proc, b, cwd)
	}
	if sess == nil {
		if bound && b.SessionID != "" && !proc.CanLoad() {
			t.laneNotice(sysmsg.NewSession{CannotResume: true})
		}
		t.mu.Lock()
		t.tr = store.NewTranscript()
		t.mu.Unlock()
		sess, err = proc.NewSession(ctx, cwd, t)
		if err != nil {
			proc.Kill()
			t.r.release()
			return nil, err
		}
		t.attachLog(proc, sess.ID)
		t.setMeta(sess)
		now := time.Now()
		nb := store.Binding{Thread: t.ref, Agent: spec.Name, SessionID: sess.ID, Cwd: cwd, Created: now, Updated: now}
		perr := t.r.persist(context.WithoutCancel(ctx), t.ref, "the binding", func(ctx context.Context) error { return st.PutBinding(ctx, nb) })
		if perr != nil {
			t.r.log.Error("cannot save the binding; the session will not survive a restart", "thread", t.ref, "session", sess.ID, "err", perr)
			t.laneNotice(sysmsg.NotSaved{})
		}
	}
	t.mu.Lock()
	t.proc, t.sess, t.slot = proc, sess, true
	t.cwd = cwd
	t.mu.Unlock()
	t.r.agentEvent(t.ref, "started")
	if as, ok := t.ad.(channels.AgentShower); ok {
		as.ShowAgent(t.ref, spec.Name)
	}
	t.r.wg.Go(func() { t.watch(proc) })
	return sess, nil
}

// resume loads the bound session; nil when that fails (a notice says so).
func (t *thread) resume(ctx context.Context, proc *agent.Process, b store.Binding, cwd string) *agent.Session {
	tr, err := t.r.o.Store.LoadTranscript(ctx, b.SessionID)
	if err != nil {
		t.r.log.Warn("cannot load the transcript", "thread", t.ref, "err", err)
		tr = store.NewTranscript()
	}
	t.mu.Lock()
	t.tr = tr
	t.mu.Unlock()
	t.attachLog(proc, b.SessionID)
	sess, err := proc.LoadSession(ctx, b.SessionID, cwd, t)
	if err != nil {
		t.r.log.Warn("cannot resume the session", "thread", t.ref, "session", b.SessionID, "err", err)
		t.laneNotice(sysmsg.NewSession{})
		t.detachLog(proc)
		return nil
	}
	t.r.log.Info("session resumed", "thread", t.ref, "session", b.SessionID)
	return sess
}

func (t *thread) setMeta(s *agent.Session) {
	var m store.Meta
	if s.Modes != nil {
		m.CurrentMode = s.Modes.Current
		for _, md := range s.Modes.Available {
			m.Modes = append(m.Modes, store.Mode(md))
		}
	}
	if s.Models != nil {
		m.CurrentModel = s.Models.Current
		for _, md := range s.Models.Available {
			m.Models = append(m.Models, store.Model(md))
		}
	}
	for _, c := range s.Config {
		m.Config = append(m.Config, projector.ConfigOption{ID: c.ID, Name: c.Name, Value: c.Value})
	}
	t.mu.Lock()
	t.tr.SetMeta(m)
	t.mu.Unlock()
}

// attachLog opens the session's event log and attaches it to the process.
func (t *thread) attachLog(proc *agent.Process, sessionID string) {
	dir := t.r.o.EventLogDir
	if dir == "" {
		return
	}
	w, err := eventlog.Open(dir, sessionID, t.r.o.EventLog)
	if err != nil {
		t.r.log.Error("cannot open the event log", "thread", t.ref, "session", sessionID, "err", err)
		return
	}
	t.mu.Lock()
	t.evlog = w
	t.mu.Unlock()
	proc.SetFrameSink(func(_ agent.Direction, line []byte) {
		if err := w.Write(line); err != nil {
			t.r.log.Error("event log write failed", "session", sessionID, "err", err)
		}
	})
}

// detachLog closes the event log of a session the live process no longer
// serves (a failed session/load). Frames from then on are kept by the
// process until attachLog gives it the next session's log.
func (t *thread) detachLog(proc *agent.Process) {
	t.mu.Lock()
	w := t.evlog
	t.evlog = nil
	t.mu.Unlock()
	if w == nil {
		return
	}
	proc.SetFrameSink(nil)
	if err := w.Close(); err != nil {
		t.r.log.Warn("cannot close the event log", "thread", t.ref, "err", err)
	}
}

// closeLogAfterExit waits until proc (stopped or exiting) has exited, so
// that everything it wrote has been logged, and then closes its event log
// w. Frames the gateway still writes to the dead process are not logged:
// they were never delivered. Either may be nil.
func (t *thread) closeLogAfterExit(proc *agent.Process, w *eventlog.Writer) {
	if w == nil {
		return
	}
	if proc != nil {
		<-proc.Exited()
		proc.SetFrameSink(nil)
	}
	if err := w.Close(); err != nil {
		t.r.log.Warn("cannot close the event log", "thread", t.ref, "err", err)
	}
}

// watch notices an agent that exits while the thread is idle, so its slot
// is freed and the next message starts a fresh process.
func (t *thread) watch(proc *agent.Process) {
	<-proc.Exited()
	t.mu.Lock()
	mine := t.proc == proc
	var w *eventlog.Writer
	if mine && t.turn == nil {
		t.r.log.Info("agent exited while idle", "thread", t.ref, "err", proc.Err())
		w = t.dropProcessLocked()
	}
	t.mu.Unlock()
	t.closeLogAfterExit(proc, w)
	if mine {
		t.r.agentEvent(t.ref, "exited")
	} else {
		t.r.agentEvent(t.ref, "stopped")
	}
}

// dropProcessLocked forgets the process (it has exited or is being
// stopped) and frees the slot. It returns the process's event log, which
// the caller closes with closeLogAfterExit once the process is stopped:
// an agent may write its last frames while it stops.
func (t *thread) dropProcessLocked() *eventlog.Writer {
	w := t.evlog
	t.evlog = nil
	t.proc, t.sess = nil, nil
	if t.slot {
		t.slot = false
		t.r.release()
	}
	return w
}
