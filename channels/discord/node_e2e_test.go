package discord

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
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
)

// node is one run of the gateway on a data directory that outlives it,
// so that a test can stop it and start another on the same directory.
type node struct {
	a      *Adapter
	ends   *sessiontest.TurnEnds
	cancel context.CancelFunc
	wg     sync.WaitGroup
	st     *store.Store
}

// startNode runs the router and the adapter against f on dir, with the
// demo agent, until stop (or the end of the test).
func startNode(t *testing.T, f *fakeDiscord, dir string, rule session.AccessRule, cu session.CatchUp) *node {
	t.Helper()
	return startNodeWith(t, f, dir, rule, cu, sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv))
}

// startNodeWith is startNode with spec as the agent.
func startNodeWith(t *testing.T, f *fakeDiscord, dir string, rule session.AccessRule, cu session.CatchUp, spec agent.Spec) *node {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	var log *slog.Logger
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	n := &node{ends: sessiontest.NewTurnEnds(), cancel: cancel, st: st}
	var r *session.Router
	n.a = f.adapter(t, Options{Logger: log, Admit: func(ctx context.Context, in channels.Inbound) bool { return r.Admit(ctx, in) }})
	r = session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Access:      map[string]session.AccessRule{Platform: rule},
		Logger:      log,
		OnTurnEnd:   n.ends.Record,
		CatchUp:     cu,
	})
	r.Add(Platform, n.a)
	n.wg.Go(func() {
		if err := n.a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	n.wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() { n.stop(t) })
	f.waitLive(testCtx(t))
	return n
}

// stop shuts the node down and closes its store; it may be called twice.
func (n *node) stop(t *testing.T) {
	t.Helper()
	if n.st == nil {
		return
	}
	n.cancel()
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Error("the gateway did not shut down within 30 s")
	}
	n.st.Close()
	n.st = nil
}

func (n *node) waitEnd(t *testing.T, f *fakeDiscord, th channels.ThreadRef) {
	t.Helper()
	if _, ok := n.ends.Next(testCtx(t), th); !ok {
		t.Fatalf("no turn end in %v; messages:\n%s", th, dumpBot(f, th.Thread))
	}
}

func dumpBot(f *fakeDiscord, channel string) string {
	var b strings.Builder
	for _, m := range f.botMessages(channel) {
		b.WriteString("--- " + m.ID + "\n" + m.Content + "\n")
	}
	return b.String()
}

// since returns the bot's messages in channel after the first n.
func since(f *fakeDiscord, channel string, n int) []fakeMessage {
	ms := f.botMessages(channel)
	if n > len(ms) {
		return nil
	}
	return ms[n:]
}
