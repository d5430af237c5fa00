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
	"github.com/acpgw/gateway/channels/channeltest"
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

// Messages written to bound threads while the gateway was down are
// answered by the next gateway on the same data directory: in order and
// once, not those of people without access, not in a thread quiet for
// longer than the window, and past the limit the thread is told instead.
func TestCatchUpAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	leaks := channeltest.LeakCheck(t)
	t.Cleanup(leaks)
	f := newFake(t)
	dir := t.TempDir()
	rule := session.AccessRule{Guilds: []string{f.guild}, Users: []string{ann.ID}}
	cu := session.CatchUp{Window: 24 * time.Hour, MaxMessages: 3}
	thread := func(id string) channels.ThreadRef {
		return channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	}

	// Three bound threads: a, b (its last message two days old by the
	// time of the restart) and c.
	first := startNode(t, f, dir, rule, cu)
	a := f.say(ann, f.channel, "echo a0", true)
	first.waitEnd(t, f, thread(a))
	b := f.say(ann, f.channel, "echo b0", true)
	first.waitEnd(t, f, thread(b))
	c := f.say(ann, f.channel, "echo c0", true)
	first.waitEnd(t, f, thread(c))
	first.stop(t)

	// Down: B's last activity was two days ago.
	st, err := store.Open(t.Context(), filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MarkSeen(t.Context(), thread(b), channels.MessageID(b), time.Now().Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	n := map[string]int{a: len(f.botMessages(a)), b: len(f.botMessages(b)), c: len(f.botMessages(c))}
	f.say(ann, a, "echo a1", false)
	f.say(bob, a, "echo from bob", false)
	f.say(ann, a, "echo a2", false)
	f.say(ann, b, "echo stale", false)
	for i := range 4 {
		f.say(ann, c, "echo c"+string(rune('1'+i)), false)
	}

	second := startNode(t, f, dir, rule, cu)
	ctx := testCtx(t)
	second.waitEnd(t, f, thread(a))
	second.waitEnd(t, f, thread(a))
	if got := answerText(since(f, a, n[a])); got != "a1 a2" {
		t.Errorf("answers in a after the restart = %q, want \"a1 a2\"\n%s", got, dumpBot(f, a))
	}
	// C had more than the limit: told, nothing run.
	f.waitFor(ctx, "the notice in c", func() bool {
		for _, m := range f.botMessagesLocked(c)[n[c]:] {
			if strings.Contains(m.Content, "4 messages arrived") {
				return true
			}
		}
		return false
	})
	// B is not read: a live message there is answered alone.
	f.say(ann, b, "echo live", false)
	second.waitEnd(t, f, thread(b))
	if got := answerText(since(f, b, n[b])); got != "live" {
		t.Errorf("answers in b = %q, want only \"live\" (b was quiet for longer than the window)\n%s", got, dumpBot(f, b))
	}
	// Nothing more came in a, and nothing ran in c.
	f.say(ann, a, "echo a3", false)
	second.waitEnd(t, f, thread(a))
	if got := answerText(since(f, a, n[a])); got != "a1 a2 a3" {
		t.Errorf("answers in a = %q, want \"a1 a2 a3\" (each once)\n%s", got, dumpBot(f, a))
	}
	if got := answerText(since(f, c, n[c])); got != "" {
		t.Errorf("answers in c = %q, want none past the limit\n%s", got, dumpBot(f, c))
	}
	if reads := f.requestsMatching("GET", "/channels/"+b+"/messages"); len(reads) != 0 {
		t.Errorf("b's history was read %d times, want never", len(reads))
	}
	second.stop(t)
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("fake discord saw protocol misuse: %q", v)
	}
}

// since returns the bot's messages in channel after the first n.
func since(f *fakeDiscord, channel string, n int) []fakeMessage {
	ms := f.botMessages(channel)
	if n > len(ms) {
		return nil
	}
	return ms[n:]
}
