package owner

// The thread's agent process: starting it (or resuming its session),
// its event log, and watching it exit.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/workspace"
)

// started is what a start hands the owner (AgentStarted).
type started struct {
	files []channels.File
	// A new process and its session, nil when the live one serves.
	proc  *agent.Process
	sess  *agent.Session
	evlog FrameLog
	cwd   string
	meta  store.Meta
	// mcp is the thread's MCP server, nil when it has none.
	mcp *mcpgate.Server
	// context is what the thread said before, for the first prompt.
	context string
	agent   string // the agent's name
	// withheld are the variables the agent was started without.
	withheld []agent.Withheld
}

// startAgent begins the start of in's turn on a child goroutine: its
// files, a process slot and a new agent when need is set; it reports
// back with a startedEv. CancelStart gives it up.
func (t *Thread) startAgent(in channels.Inbound, need bool) {
	// Typing shows from now on, also while the agent starts.
	t.view().Lane.AgentStarting()
	if t.proc != nil && t.proc.Err() != nil {
		// Exited and not told yet: its slot goes before a new one is
		// taken.
		proc := t.proc
		w := t.dropProcess()
		t.d.WG.Go(func() { t.closeLogAfterExit(proc, w) })
	}
	if t.sess == nil {
		need = true
	}
	ctx, cancel := context.WithCancel(t.d.Ctx)
	t.cancelStart = cancel
	pick, mcp := t.pick, t.mcp
	t.d.WG.Go(func() {
		defer cancel()
		res, err := t.prepare(ctx, in, need, pick, mcp)
		t.inbox.send(startedEv{res: res, err: err})
	})
}

// prepare is the start, on its own goroutine: it downloads the message's
// files (Inbound.Fetch) and, when need is set, takes a process slot
// (waiting in line with other threads) and starts the agent. It touches
// no thread state: what it makes goes back in the result.
func (t *Thread) prepare(ctx context.Context, in channels.Inbound, need bool, pick string, mcp *mcpgate.Server) (*started, error) {
	files := in.Files
	if in.Fetch != nil {
		files = in.Fetch(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !need {
		t.inbox.event(thread.SlotTaken{})
		return &started{files: files}, nil
	}
	// Waiting for a slot does not count against the start timeout.
	if err := t.d.Host.Acquire(ctx, t); err != nil {
		return nil, err
	}
	t.inbox.event(thread.SlotTaken{})
	res, err := t.launch(ctx, pick, in, mcp)
	if err != nil {
		t.d.Host.Release()
		return nil, err
	}
	res.files = files
	return res, nil
}

// launch starts the agent and creates or resumes its session; the
// caller holds a process slot for it. pick is the agent the thread's
// first message picked ("" = the policy's), for a thread not bound yet;
// in is the message to run (its words name a worktree's branch; a thread
// not bound yet reads what was said before it); mcp the thread's MCP
// server, if it has one already.
func (t *Thread) launch(ctx context.Context, pick string, in channels.Inbound, mcp *mcpgate.Server) (*started, error) {
	st := t.d.Store
	// What the thread wrote before (a /new, the last session's binding,
	// its choices) is what it reads now.
	t.saves.flush(ctx)
	b, bound, err := st.Binding(ctx, t.ref)
	if err != nil {
		return nil, fmt.Errorf("read the thread's binding: %w", err)
	}
	agentName := b.Agent
	if !bound || agentName == "" {
		agentName = t.d.Host.PolicyFor(t.ref, t.space).Agent
		if pick != "" {
			agentName = pick
		}
	}
	spec, ok := t.d.Host.AgentSpec(agentName)
	if !ok {
		spec, ok = t.d.Host.AgentSpec("")
		if !ok {
			return nil, errors.New("no agent is configured")
		}
	}
	ws, err := t.openWorkspace(ctx, &spec, b.Cwd, shortName(in.Text))
	if err != nil {
		return nil, err
	}
	root, cwd := ws.Root, ws.Path
	srv := t.openMCP(mcp, spec, root)
	sandboxed(&spec, ws, srv)
	closeNew := func() {
		if srv != nil && srv != mcp {
			srv.Close()
		}
	}
	proc, err := agent.Start(ctx, spec, agent.Options{Logger: t.d.Log.With("thread", t.ref), StopGrace: t.d.Limits.StopGrace, Registry: t.d.Registry})
	if err != nil {
		closeNew()
		return nil, err
	}
	if srv != nil {
		srv.SetAgent(proc.Pid()) // its tools answer this process's tree only
	}
	res := &started{proc: proc, cwd: cwd, mcp: srv, withheld: proc.Withheld()}
	if !bound {
		res.context = t.backfill(ctx, in)
	}
	if bound && b.SessionID != "" && (proc.CanResume() || proc.CanLoad()) {
		res.sess, res.evlog = t.resume(ctx, proc, b, cwd, srv)
	}
	if res.sess == nil {
		if bound && b.SessionID != "" && !proc.CanResume() && !proc.CanLoad() {
			t.laneNotice(sysmsg.NewSession{CannotResume: true})
		}
		t.inbox.send(transcriptEv{tr: store.NewTranscript()})
		sess, err := proc.NewSession(ctx, cwd, t, mcpServers(srv)...)
		if err != nil {
			proc.Kill()
			closeNew()
			return nil, err
		}
		res.sess = sess
		res.evlog = t.attachLog(ctx, proc, sess.ID)
		now := time.Now()
		nb := store.Binding{Thread: t.ref, Agent: spec.Name, SessionID: sess.ID, Cwd: cwd, Created: now, Updated: now}
		ref, log := t.ref, t.d.Log
		t.saves.write("", "the binding", func(ctx context.Context) error { return st.PutBinding(ctx, nb) }, func(err error) {
			log.Error("cannot save the binding; the session will not survive a restart", "thread", ref, "session", nb.SessionID, "err", err)
			t.laneNotice(sysmsg.NotSaved{})
		})
	}
	// The thread's choices (/model, …) hold for every session of it.
	if choices, err := st.Choices(ctx, t.ref); err != nil {
		t.d.Log.Error("cannot read the thread's choices", "thread", t.ref, "err", err)
	} else {
		t.forgetRefused(applyChoices(ctx, res.sess, choices, t.d.Log.With("thread", t.ref)))
	}
	res.agent = spec.Name
	res.meta = sessionMeta(res.sess)
	t.d.Host.AgentEvent(t.ref, "started")
	t.runner.ShowAgent(spec.Name)
	t.d.WG.Go(func() { t.watch(proc) })
	return res, nil
}

// sandboxed completes spec's sandbox, if it has one, with what is the
// thread's: its workspace root (read-write), the repository of a worktree
// and its MCP server's socket.
func sandboxed(spec *agent.Spec, ws workspace.Info, srv *mcpgate.Server) {
	if spec.Sandbox == nil {
		return
	}
	sb := spec.Sandbox.Clone()
	sb.Workspace = ws.Root
	sb.Git.Common, sb.Git.Own = ws.GitCommon, ws.GitDir
	if srv != nil {
		sb.Sockets = append(sb.Sockets, srv.SocketPath())
	}
	spec.Sandbox = &sb
}

// startEnded takes over what the start made and tells the machine.
func (t *Thread) startEnded(res *started, err error) {
	t.cancelStart = nil
	if err == nil {
		t.files = res.files
		if res.proc != nil {
			t.proc, t.sess, t.slot = res.proc, res.sess, true
			t.evlog = res.evlog
			t.cwd = res.cwd
			t.workspace.Store(&res.cwd)
			t.mcp = res.mcp
			t.context = res.context
			t.cmd.agent, t.cmd.opts, t.cmd.modes = res.agent, slices.Clone(res.sess.Config), nil
			if m := res.sess.Modes; m != nil {
				c := *m
				t.cmd.modes = &c
			}
			t.cmd.models = nil
			if res.sess.LegacyModels() {
				c := *res.sess.Models
				t.cmd.models = &c
			}
			t.showSession()
			t.tellWithheld(res.withheld)
			if t.tr != nil {
				t.tr.SetMeta(res.meta)
			}
		}
	}
	t.apply(thread.AgentStarted{Err: err, Workspace: isWorkspaceError(err)})
}

// tellWithheld says in the thread, once per variable for the thread's
// life, which variables its agent was started without and why: the log is
// not where the person who wonders why the agent misbehaves looks.
func (t *Thread) tellWithheld(ws []agent.Withheld) {
	for _, w := range ws {
		if t.envTold[w.Name] {
			continue
		}
		if t.envTold == nil {
			t.envTold = map[string]bool{}
		}
		t.envTold[w.Name] = true
		t.laneNotice(sysmsg.EnvWithheld{Name: w.Name, Why: w.Why})
	}
}

// resume loads the bound session and returns it with its event log; nil
// when that fails (a notice says so).
func (t *Thread) resume(ctx context.Context, proc *agent.Process, b store.Binding, cwd string, mcp *mcpgate.Server) (*agent.Session, FrameLog) {
	tr, err := t.d.Store.LoadTranscript(ctx, b.SessionID)
	if err != nil {
		t.d.Log.Warn("cannot load the transcript", "thread", t.ref, "err", err)
		tr = store.NewTranscript()
	}
	// Before session/load replays the history into it.
	t.inbox.send(transcriptEv{tr: tr})
	w := t.attachLog(ctx, proc, b.SessionID)
	// session/resume where the agent has it: nothing is replayed (the
	// thread shows its history already); else session/load, whose
	// replay the projector does not show.
	var sess *agent.Session
	err = agent.ErrUnsupported
	if proc.CanResume() {
		if sess, err = proc.ResumeSession(ctx, b.SessionID, cwd, t, mcpServers(mcp)...); err != nil && proc.CanLoad() {
			t.d.Log.Warn("cannot resume the session; loading it", "thread", t.ref, "session", b.SessionID, "err", err)
		}
	}
	if sess == nil && proc.CanLoad() {
		sess, err = proc.LoadSession(ctx, b.SessionID, cwd, t, mcpServers(mcp)...)
	}
	if err != nil {
		t.d.Log.Warn("cannot resume the session", "thread", t.ref, "session", b.SessionID, "err", err)
		t.laneNotice(sysmsg.NewSession{})
		t.detachLog(proc, w)
		return nil, nil
	}
	t.d.Log.Info("session resumed", "thread", t.ref, "session", b.SessionID)
	return sess, w
}

// sessionMeta is what the transcript keeps of a session's modes and
// models.
func sessionMeta(s *agent.Session) store.Meta {
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
	return m
}

// attachLog opens the session's event log, attaches it to the process and
// returns it (nil when there is none). The session's last process may
// still be writing its own (closingLogs): the new one waits for it, its
// frames kept by the process meanwhile.
func (t *Thread) attachLog(ctx context.Context, proc *agent.Process, sessionID string) FrameLog {
	if t.d.ClosingLogs.pending(sessionID) {
		t.d.Log.Info("waiting for the session's last event log to close", "thread", t.ref, "session", sessionID)
		t.d.ClosingLogs.waitClosed(ctx, sessionID)
	}
	w, err := t.d.Host.OpenFrameLog(sessionID)
	if err != nil {
		t.d.Log.Error("cannot open the event log", "thread", t.ref, "session", sessionID, "err", err)
		return nil
	}
	if w == nil {
		return nil
	}
	proc.SetFrameSink(func(_ agent.Direction, line []byte) {
		if err := w.Write(line); err != nil {
			t.d.Log.Error("event log write failed", "session", sessionID, "err", err)
		}
	})
	return w
}

// detachLog closes w, the event log of a session the live process no
// longer serves (a failed session/load). Frames from then on are kept by
// the process until attachLog gives it the next session's log.
func (t *Thread) detachLog(proc *agent.Process, w FrameLog) {
	if w == nil {
		return
	}
	proc.SetFrameSink(nil)
	if err := w.Close(); err != nil {
		t.d.Log.Warn("cannot close the event log", "thread", t.ref, "err", err)
	}
}

// closeLogAfterExit waits until proc (stopped or exiting) has exited, so
// that everything it wrote has been logged, and then closes its event log
// w. Frames the gateway still writes to the dead process are not logged:
// they were never delivered. Either may be nil.
func (t *Thread) closeLogAfterExit(proc *agent.Process, w FrameLog) {
	if w == nil {
		return
	}
	if proc != nil {
		<-proc.Exited()
		proc.SetFrameSink(nil)
	}
	if err := w.Close(); err != nil {
		t.d.Log.Warn("cannot close the event log", "thread", t.ref, "err", err)
	}
}

// watch tells the owner when proc exits, so that an agent that dies while
// the thread is idle frees its slot and the next message starts a fresh
// process.
func (t *Thread) watch(proc *agent.Process) {
	<-proc.Exited()
	if !t.inbox.send(exitedEv{proc: proc}) {
		t.d.Host.AgentEvent(t.ref, "stopped") // the thread is gone: shut down
	}
}
