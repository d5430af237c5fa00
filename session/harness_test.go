package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/workspace"
)

// env is a gateway (router, store, event log) around a recording channel,
// with the demo agent as a real subprocess.
type env struct {
	t        *testing.T
	dir      string
	rec      *channeltest.Recorder
	st       *store.Store
	r        *session.Router
	cancel   context.CancelFunc
	done     chan struct{}
	ends     *sessiontest.TurnEnds
	finished chan turnEnd // the agent answered (delivery may lag)
	agents   chan agentEvent
	logs     *logBuffer // the router's log
	spawned  chan int   // pids of agent processes, as soon as each runs

	idsMu sync.Mutex
	ids   map[string]int // how many messages say gave each id
}

// messageID returns the id of a person's message: base the first time,
// base#n the n-th (a platform gives each message its own; the owner
// drops a message with an id it took before, as delivered twice).
func (e *env) messageID(base string) channels.MessageID {
	e.idsMu.Lock()
	defer e.idsMu.Unlock()
	if e.ids == nil {
		e.ids = map[string]int{}
	}
	e.ids[base]++
	if n := e.ids[base]; n > 1 {
		return channels.MessageID(fmt.Sprintf("%s#%d", base, n))
	}
	return channels.MessageID(base)
}

type agentEvent struct {
	thread channels.ThreadRef
	event  string
}

// waitAgent waits for an agent event in th.
func (e *env) waitAgent(th channels.ThreadRef, event string) {
	e.t.Helper()
	ctx := e.ctx()
	for {
		select {
		case ev := <-e.agents:
			if ev.thread == th && ev.event == event {
				return
			}
		case <-ctx.Done():
			e.t.Fatalf("no agent event %q in %s", event, th)
		}
	}
}

// waitSpawned returns the pid of the next agent process the gateway
// started. It is known as soon as the process runs, before the agent has
// read or answered anything.
func (e *env) waitSpawned() int {
	e.t.Helper()
	select {
	case pid := <-e.spawned:
		return pid
	case <-e.ctx().Done():
		e.t.Fatal("no agent process was started")
		return 0
	}
}

// spawnWatch passes records on to Handler and sends the pid of each
// "agent started" record (package agent logs it once the process runs).
type spawnWatch struct {
	slog.Handler
	pids chan<- int // full: dropped (a test that wants pids reads them as they come)
}

func (h *spawnWatch) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.Handler.Enabled(ctx, l)
}

func (h *spawnWatch) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "agent started" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "pid" {
				select {
				case h.pids <- int(a.Value.Int64()):
				default:
				}
			}
			return true
		})
	}
	if h.Handler.Enabled(ctx, r.Level) {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

func (h *spawnWatch) WithAttrs(as []slog.Attr) slog.Handler {
	return &spawnWatch{Handler: h.Handler.WithAttrs(as), pids: h.pids}
}

func (h *spawnWatch) WithGroup(name string) slog.Handler {
	return &spawnWatch{Handler: h.Handler.WithGroup(name), pids: h.pids}
}

type turnEnd struct {
	thread channels.ThreadRef
	end    projector.TurnEnd
}

type envOptions struct {
	rec      channeltest.Options
	policy   *session.Policy
	access   map[string]session.AccessRule
	open     bool
	grace    time.Duration
	noWords  bool // stop words off (abort.enabled: false)
	limits   session.Limits
	agentEnv []string
	dir      string // reuse a data dir (a restart)
	recorder *channeltest.Recorder
	spec     *agent.Spec
	agents   func(string) (agent.Spec, bool) // replaces spec: agents by name
	adapter  channels.Adapter                // wraps the recorder's adapter
	catchUp  session.CatchUp
	busy     time.Duration // the store's busy timeout (0: the default)
	threads  session.Threads
	// workspaces and agentWorkspace give threads their workspaces; mcp
	// gives each session the gateway's MCP server (this test binary).
	workspaces     *workspace.Manager
	agentWorkspace func(string) workspace.Agent
	mcp            bool
	frameLog       func(sessionID string) (session.FrameLog, error) // Options.OpenFrameLog
	store          func(store.Backend) store.Backend                // wraps the router's store
	shared         bool                                             // Options.Shared (a cluster worker)
	// noLeakCheck: the caller checks for leaked goroutines (around
	// parallel subtests, whose goroutines the check would count).
	noLeakCheck bool
}

var ann = channels.Author{ID: "u-ann", Name: "Ann"}
var bob = channels.Author{ID: "u-bob", Name: "Bob"}

func demoSpec(stateDir string, env ...string) agent.Spec {
	return sessiontest.DemoAgent(stateDir, "SESSION_TEST_DEMO_AGENT", env...)
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	leaks := func() {}
	if !o.noLeakCheck {
		leaks = channeltest.LeakCheck(t)
	}
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.OpenWith(ctx, filepath.Join(dir, "gateway.db"), store.Options{BusyTimeout: o.busy})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	if o.rec.Platform == "" {
		o.rec.Platform = "web"
	}
	rec := o.recorder
	if rec == nil {
		rec = channeltest.New(o.rec)
	}
	e := &env{t: t, dir: dir, rec: rec, st: st, cancel: cancel, done: make(chan struct{}), ends: sessiontest.NewTurnEnds(), finished: make(chan turnEnd, 100), agents: make(chan agentEvent, 100), logs: &logBuffer{}, spawned: make(chan int, 1000)}
	ab := abort.DefaultConfig()
	if o.grace > 0 {
		ab.Grace = o.grace
	}
	ab.Enabled = !o.noWords
	var open []string
	if o.open || o.access == nil {
		open = []string{o.rec.Platform}
	}
	spec := demoSpec(filepath.Join(dir, "demo-state"), o.agentEnv...)
	if o.spec != nil {
		spec = *o.spec
	}
	agents := o.agents
	if agents == nil {
		agents = func(string) (agent.Spec, bool) { return spec, true }
	}
	var backend store.Backend = st
	if o.store != nil {
		backend = o.store(st)
	}
	if d := slowWritesFromEnv(t); d > 0 {
		backend = slowWrites{Backend: backend, d: d}
	}
	so := session.Options{
		Store:  backend,
		Shared: o.shared,
		Logger: slog.New(&spawnWatch{Handler: slog.NewMultiHandler(
			testlog.FailOnSDKError(t).Handler(), slog.NewTextHandler(e.logs, nil)), pids: e.spawned}),
		EventLogDir:    filepath.Join(dir, "events"),
		OpenFrameLog:   o.frameLog,
		Agent:          agents,
		Cwd:            dir,
		Access:         o.access,
		Open:           open,
		Abort:          ab,
		Limits:         o.limits,
		CatchUp:        o.catchUp,
		Threads:        o.threads,
		Workspaces:     o.workspaces,
		AgentWorkspace: o.agentWorkspace,
		OnTurnEnd: func(th channels.ThreadRef, end projector.TurnEnd) {
			rec.NoteIn(th, channeltest.Op{Op: "turn_end", StopReason: end.StopReason})
			e.ends.Record(th, end)
		},
		OnAgent: func(th channels.ThreadRef, ev string) { send(e.agents, agentEvent{th, ev}) },
		OnTurnFinished: func(th channels.ThreadRef, stop string, err error) {
			send(e.finished, turnEnd{th, projector.TurnEnd{StopReason: stop}})
		},
	}
	if o.mcp {
		so.MCPDir = filepath.Join(dir, "mcp")
		so.MCPCommand, _ = os.Executable()
	}
	if o.policy != nil {
		p := *o.policy
		so.Policy = func(channels.ThreadRef, string) session.Policy { return p }
	}
	e.r = session.New(so)
	ad := rec.Adapter()
	if o.adapter != nil {
		ad = o.adapter
	}
	e.r.Add(o.rec.Platform, ad)
	var wg sync.WaitGroup
	wg.Go(func() { _ = ad.Run(ctx, e.r.Handle) })
	wg.Go(func() { _ = e.r.Run(ctx) })
	go func() { wg.Wait(); close(e.done) }()
	t.Cleanup(func() {
		e.close()
		leaks()
	})
	return e
}

// close shuts the gateway down and waits for it.
func (e *env) close() {
	select {
	case <-e.done:
		return
	default:
	}
	e.cancel()
	select {
	case <-e.done:
	case <-time.After(30 * time.Second):
		e.t.Error("the gateway did not shut down within 30 s")
	}
	e.st.Close()
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(e.t.Context(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

func (e *env) say(th channels.ThreadRef, who channels.Author, text string) {
	e.t.Helper()
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: who, Text: text, ID: e.messageID("in-" + text), Reply: e.rec.ReplyFunc(th)}); err != nil {
		e.t.Fatalf("deliver %q: %v", text, err)
	}
}

// waitEnd waits for the next turn end in th.
func (e *env) waitEnd(th channels.ThreadRef) projector.TurnEnd {
	e.t.Helper()
	end, ok := e.ends.Next(e.ctx(), th)
	if !ok {
		e.t.Fatalf("no turn end in %s; ops: %v", th, e.rec.OpsIn(th))
	}
	return end
}

// waitEndRaw waits until the agent answered a prompt in th, whether or
// not its output has been delivered.
func (e *env) waitEndRaw(th channels.ThreadRef) projector.TurnEnd {
	e.t.Helper()
	ctx := e.ctx()
	for {
		select {
		case te := <-e.finished:
			if te.thread == th {
				return te.end
			}
		case <-ctx.Done():
			e.t.Fatalf("the agent never answered in %s", th)
		}
	}
}

// waitOp waits until an op in th satisfies ok and returns it.
func (e *env) waitOp(th channels.ThreadRef, what string, ok func(channeltest.Op) bool) channeltest.Op {
	e.t.Helper()
	var found channeltest.Op
	err := e.rec.WaitFor(e.ctx(), th, func(ops []channeltest.Op) bool {
		for _, op := range ops {
			if ok(op) {
				found = op
				return true
			}
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v", what, err)
	}
	return found
}

// text returns the thread's assistant text (text messages, in order).
func (e *env) text(th channels.ThreadRef) string {
	var b strings.Builder
	for _, m := range e.rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindText {
			b.WriteString(m.Text)
		}
	}
	return b.String()
}

func (e *env) messages(th channels.ThreadRef, kind channels.Kind) []channeltest.Message {
	var out []channeltest.Message
	for _, m := range e.rec.Messages() {
		if m.Thread == th && m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

func isPrompt(op channeltest.Op) bool { return op.Op == "prompt" }

func hasText(sub string) func(channeltest.Op) bool {
	return func(op channeltest.Op) bool { return strings.Contains(op.Text, sub) }
}

// logBuffer collects log lines; it is safe for concurrent use.
type logBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{} // closed and replaced on every write
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// waitFor waits until the log contains sub.
func (l *logBuffer) waitFor(t *testing.T, ctx context.Context, sub string) {
	t.Helper()
	l.waitForAny(t, ctx, sub)
}

// waitForAny waits until the log contains one of subs, and returns it.
func (l *logBuffer) waitForAny(t *testing.T, ctx context.Context, subs ...string) string {
	t.Helper()
	for {
		l.mu.Lock()
		for _, sub := range subs {
			if strings.Contains(l.b.String(), sub) {
				l.mu.Unlock()
				return sub
			}
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("none of %q in the log:\n%s", subs, l.String())
		}
	}
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// send never blocks the gateway on a test's event channel.
func send[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
		panic("test event channel full")
	}
}
