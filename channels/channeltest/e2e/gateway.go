package e2e

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/workspace"
)

// Config is how a case's gateway differs from the default one.
type Config struct {
	// Dir is the gateway's data directory; "" a new one. A test that
	// restarts the gateway starts the next one on the same Dir.
	Dir string
	// Access is the platform's access rule, before Driver.Access adds
	// the fake's space.
	Access session.AccessRule
	// AgentEnv is the environment variable that makes the test binary
	// the demo agent (the package's TestMain).
	AgentEnv string
	// Policy, CatchUp, Workspaces and AgentWorkspace are the router's
	// options of those names (zero: the router's defaults).
	Policy         *session.Policy
	CatchUp        session.CatchUp
	Workspaces     *workspace.Manager
	AgentWorkspace func(name string) workspace.Agent
	// Before runs once the adapter exists and before its Run starts.
	Before func(a channels.Adapter)
}

// Gateway is one run of the gateway: the session router and the
// driver's adapter, and the demo agent as a subprocess.
type Gateway struct {
	t       *testing.T
	d       Driver
	Adapter channels.Adapter
	Store   *store.Store
	Dir     string // its data directory
	ends    *sessiontest.TurnEnds
	logs    *logWatch
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped bool
}

// Start runs a gateway with d's adapter until Stop or the end of the
// test. The end of the test also checks that no goroutine was left.
func Start(t *testing.T, d Driver, c Config) *Gateway {
	t.Helper()
	dir := c.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		cancel()
		t.Fatalf("store.Open: %v", err)
	}
	g := &Gateway{t: t, d: d, Store: st, Dir: dir, ends: sessiontest.NewTurnEnds(), logs: newLogWatch(), cancel: cancel}
	sdk := testlog.FailOnSDKError(t) // for the agents: an ACP SDK error fails the test
	log := slog.New(slog.NewMultiHandler(sdk.Handler(), g.logs))
	var alog *slog.Logger
	if testing.Verbose() {
		alog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		log = slog.New(slog.NewMultiHandler(log.Handler(), alog.Handler()))
	}
	spec := sessiontest.DemoAgent(g.AgentState(), c.AgentEnv)
	var r *session.Router
	g.Adapter = d.Adapter(t, Wiring{
		Admit: func(ctx context.Context, in channels.Inbound) bool { return r.Admit(ctx, in) },
		Known: func(ctx context.Context, th channels.ThreadRef) bool {
			_, ok, err := st.Binding(ctx, th)
			return ok && err == nil
		},
		Logger: alog,
	})
	o := session.Options{
		Store:          st,
		EventLogDir:    filepath.Join(dir, "events"),
		Agent:          func(string) (agent.Spec, bool) { return spec, true },
		Cwd:            dir,
		Access:         map[string]session.AccessRule{d.Platform(): d.Access(c.Access)},
		Logger:         log,
		OnTurnEnd:      g.ends.Record,
		CatchUp:        c.CatchUp,
		Workspaces:     c.Workspaces,
		AgentWorkspace: c.AgentWorkspace,
	}
	if c.Policy != nil {
		p := *c.Policy
		o.Policy = func(channels.ThreadRef, string) session.Policy { return p }
	}
	r = session.New(o)
	r.Add(d.Platform(), g.Adapter)
	if c.Before != nil {
		c.Before(g.Adapter)
	}
	g.wg.Go(func() {
		if err := g.Adapter.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	g.wg.Go(func() { _ = r.Run(ctx) })
	t.Cleanup(g.Stop)
	d.Connected(t, g.Ctx())
	return g
}

// LeakCheck checks, at the end of the test, that the test left no
// goroutine behind. Call it before the driver starts its fake, so that
// the fake's server stops before the check.
func LeakCheck(t *testing.T) {
	t.Cleanup(channeltest.LeakCheck(t))
}

// Stop shuts the gateway down and closes its store; it may be called
// twice.
func (g *Gateway) Stop() {
	g.t.Helper()
	if g.stopped {
		return
	}
	g.stopped = true
	g.cancel()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		g.t.Error("the gateway did not shut down within 30 s")
	}
	g.Store.Close()
}

// AgentState is the demo agent's state directory: its sessions' files.
func (g *Gateway) AgentState() string { return filepath.Join(g.Dir, "demo-state") }

// Ctx bounds a wait of the test.
func (g *Gateway) Ctx() context.Context {
	ctx, cancel := context.WithTimeout(g.t.Context(), 30*time.Second)
	g.t.Cleanup(cancel)
	return ctx
}

// Ends is the turns' ends the router reported.
func (g *Gateway) Ends() *sessiontest.TurnEnds { return g.ends }

// WaitEnd waits for the end of the next turn in th and returns its stop
// reason.
func (g *Gateway) WaitEnd(th channels.ThreadRef) string {
	g.t.Helper()
	end, ok := g.ends.Next(g.Ctx(), th)
	if !ok {
		g.t.Fatalf("no turn end in %v; messages:\n%s", th, g.Dump(th))
	}
	return end.StopReason
}

// Mention has who mention the app with text, opening a thread.
func (g *Gateway) Mention(who Person, text string) channels.ThreadRef {
	g.t.Helper()
	return g.d.Mention(g.t, g.Ctx(), who, text)
}

// Say has who write text in th.
func (g *Gateway) Say(who Person, th channels.ThreadRef, text string) channels.MessageID {
	g.t.Helper()
	return g.d.Say(g.t, g.Ctx(), who, th, text)
}

// Messages returns the gateway's messages in th.
func (g *Gateway) Messages(th channels.ThreadRef) []Message { return g.d.Messages(th) }

// Since returns the gateway's messages in th after the first n.
func (g *Gateway) Since(th channels.ThreadRef, n int) []Message {
	ms := g.d.Messages(th)
	if n > len(ms) {
		return nil
	}
	return ms[n:]
}

// Dump lists the gateway's messages in th, for failure messages.
func (g *Gateway) Dump(th channels.ThreadRef) string {
	var b strings.Builder
	for _, m := range g.d.Messages(th) {
		b.WriteString("--- " + string(m.ID) + "\n" + m.Text + "\n")
	}
	return b.String()
}

// Wait waits until ok is true, checked at each change of the fake.
func (g *Gateway) Wait(what string, ok func() bool) {
	g.t.Helper()
	if err := Wait(g.Ctx(), g.d, ok); err != nil {
		g.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Wait waits until ok is true, checked at each change of d's fake, or
// returns ctx's error; for goroutines of a test, which must not fail it
// themselves.
func Wait(ctx context.Context, d interface{ Changed() <-chan struct{} }, ok func() bool) error {
	for {
		ch := d.Changed()
		if ok() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitMessage waits for a gateway message in th, after the first n, for
// which match is true, and returns it.
func (g *Gateway) WaitMessage(th channels.ThreadRef, n int, what string, match func(Message) bool) Message {
	g.t.Helper()
	var got Message
	if err := Wait(g.Ctx(), g.d, func() bool {
		for _, m := range g.Since(th, n) {
			if match(m) {
				got = m
				return true
			}
		}
		return false
	}); err != nil {
		g.t.Fatalf("waiting for %s: %v; messages:\n%s", what, err, g.Dump(th))
	}
	return got
}

// WaitText waits for a gateway message in th, after the first n, that
// contains sub.
func (g *Gateway) WaitText(th channels.ThreadRef, n int, sub string) Message {
	g.t.Helper()
	return g.WaitMessage(th, n, "a message with "+sub, func(m Message) bool { return strings.Contains(m.Text, sub) })
}

// WaitPrompt waits for a gateway message with controls in th, after the
// first n.
func (g *Gateway) WaitPrompt(th channels.ThreadRef, n int) Message {
	g.t.Helper()
	return g.WaitMessage(th, n, "a prompt", func(m Message) bool { return m.Controls })
}

// Message returns the gateway's message id in th as it is now.
func (g *Gateway) Message(th channels.ThreadRef, id channels.MessageID) (Message, bool) {
	for _, m := range g.d.Messages(th) {
		if m.ID == id {
			return m, true
		}
	}
	return Message{}, false
}

// WaitLog waits until the gateway logged a line that starts with prefix
// and names th.
func (g *Gateway) WaitLog(prefix string, th channels.ThreadRef) {
	g.t.Helper()
	g.logs.wait(g.t, g.Ctx(), prefix, th)
}

// logWatch keeps each log record's message and "thread" attribute, for a
// test to wait on what the gateway did on a goroutine of its own.
type logWatch struct {
	mu      sync.Mutex // guards the fields below
	lines   []string
	changed chan struct{}
}

func newLogWatch() *logWatch { return &logWatch{changed: make(chan struct{})} }

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "thread" {
			line += " " + a.Value.String()
		}
		return true
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, line)
	close(w.changed)
	w.changed = make(chan struct{})
	return nil
}
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *logWatch) WithGroup(string) slog.Handler      { return w }

func (w *logWatch) wait(t *testing.T, ctx context.Context, prefix string, th channels.ThreadRef) {
	t.Helper()
	for {
		w.mu.Lock()
		found := false
		for _, line := range w.lines {
			if strings.HasPrefix(line, prefix) && strings.Contains(line, th.String()) {
				found = true
			}
		}
		ch := w.changed
		w.mu.Unlock()
		if found {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("never logged %q for %v", prefix, th)
		}
	}
}
