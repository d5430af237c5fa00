package slack

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
)

// node is one run of the gateway on a data directory that outlives it.
type node struct {
	ends   *sessiontest.TurnEnds
	cancel context.CancelFunc
	wg     sync.WaitGroup
	st     *store.Store
}

// startNode runs the router and the adapter against f on dir, wired as
// the program wires them, until stop (or the end of the test).
func startNode(t *testing.T, f *fakeSlack, dir string, rule session.AccessRule, cu session.CatchUp) *node {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{ends: sessiontest.NewTurnEnds(), cancel: cancel, st: st}
	a := f.adapter(t, Options{
		KnownThread: func(ctx context.Context, th channels.ThreadRef) bool {
			_, ok, err := st.Binding(ctx, th)
			return ok && err == nil
		},
		HistoryInterval: -1,
	})
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	r := session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Access:      map[string]session.AccessRule{Platform: rule},
		Abort:       abort.DefaultConfig(),
		OnTurnEnd:   n.ends.Record,
		CatchUp:     cu,
	})
	r.Add(Platform, a)
	n.wg.Go(func() {
		if err := a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	n.wg.Go(func() { _ = r.Run(ctx) })
	t.Cleanup(func() { n.stop(t) })
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
		t.Error("the gateway did not stop within 30 s")
	}
	n.st.Close()
	n.st = nil
}

func (n *node) waitEnd(t *testing.T, f *fakeSlack, th channels.ThreadRef) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, ok := n.ends.Next(ctx, th); !ok {
		t.Fatalf("no turn end in %v; thread:\n%s", th, dumpThread(f, th))
	}
}

func dumpThread(f *fakeSlack, th channels.ThreadRef) string {
	var b strings.Builder
	for _, m := range f.thread(th.Channel, th.Thread) {
		b.WriteString("[" + m.TS + "] " + m.Text + "\n")
	}
	return b.String()
}

// answers joins the app's messages in th after the first n that are not
// gateway notices.
func answers(f *fakeSlack, th channels.ThreadRef, n int) string {
	ms := f.thread(th.Channel, th.Thread)
	var parts []string
	for i, m := range ms {
		if i < n || strings.HasPrefix(unescape(m.Text), "⚙") {
			continue
		}
		parts = append(parts, unescape(m.Text))
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// Messages written to bound threads while the gateway was down are
// answered by the next gateway on the same data directory, in order and
// once: a message the catch-up read and Slack then delivers live, or
// redelivers, is not answered again; a message delivered live while the
// backlog waits is answered after it. Not those of people without access,
// not in a thread quiet for longer than the window; past the limit the
// thread is told instead.
func TestCatchUpAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	dir := t.TempDir()
	f := newFake(t, fakeOptions{})
	leaks := channeltest.LeakCheck(t) // the fake's server stops after the check
	t.Cleanup(leaks)
	f.addUser(ann, "Ann")
	f.addUser(bob, "Bob")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	rule := session.AccessRule{Workspaces: []string{f.team}, Users: []string{ann}}
	cu := session.CatchUp{Window: 24 * time.Hour, MaxMessages: 3}

	first := startNode(t, f, dir, rule, cu)
	open := func(text string) channels.ThreadRef {
		s := f.mustSay(ctx, sayOptions{user: ann, text: text, mention: true})
		th := ref(fakeChannel, s.ts)
		first.waitEnd(t, f, th)
		return th
	}
	a, b, c := open("echo a0"), open("echo b0"), open("echo c0")
	first.stop(t)

	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MarkSeen(ctx, b, channels.MessageID(b.Thread), time.Now().Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	count := func(th channels.ThreadRef) int { return len(f.thread(th.Channel, th.Thread)) }
	n := map[channels.ThreadRef]int{a: count(a), b: count(b), c: count(c)}
	a1 := f.sayWhileDown(ann, a.Thread, "echo a1")
	f.sayWhileDown(bob, a.Thread, "echo from bob")
	a2 := f.sayWhileDown(ann, a.Thread, "echo a2")
	f.sayWhileDown(ann, b.Thread, "echo stale")
	for i := range 4 {
		f.sayWhileDown(ann, c.Thread, "echo c"+string(rune('1'+i)))
	}

	// The first read is asked to wait; meanwhile Slack delivers a1's
	// event after all (it retries what it could not deliver), and Ann
	// writes again. a1 is still answered before a2.
	f.failNext("conversations.replies", failure{status: 429, retryAfter: "2"})
	second := startNode(t, f, dir, rule, cu)
	if err := f.waitFor(ctx, "a history read", func() bool {
		for _, c := range f.calls {
			if c.Method == "conversations.replies" {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.send(ctx, a1.raw[0]); err != nil {
		t.Fatal(err)
	}
	f.mustSay(ctx, sayOptions{user: ann, thread: a.Thread, text: "echo live"})
	for range 3 {
		second.waitEnd(t, f, a)
	}
	if got := answers(f, a, n[a]); got != "a1 a2 live" {
		t.Errorf("answers in a after the restart = %q, want \"a1 a2 live\"\n%s", got, dumpThread(f, a))
	}
	// Slack redelivers a2: not answered again.
	f.mustRedeliver(ctx, a2.raw[0], 1)
	if err := f.waitFor(ctx, "the notice in c", func() bool {
		for _, m := range f.msgs {
			if m.ThreadTS == c.Thread && strings.Contains(unescape(m.Text), "4 messages arrived") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("%v\n%s", err, dumpThread(f, c))
	}
	f.mustSay(ctx, sayOptions{user: ann, thread: b.Thread, text: "echo live in b"})
	second.waitEnd(t, f, b)
	if got := answers(f, b, n[b]); got != "live in b" {
		t.Errorf("answers in b = %q, want only \"live in b\" (b was quiet for longer than the window)\n%s", got, dumpThread(f, b))
	}
	f.mustSay(ctx, sayOptions{user: ann, thread: a.Thread, text: "echo a3"})
	second.waitEnd(t, f, a)
	if got := answers(f, a, n[a]); got != "a1 a2 live a3" {
		t.Errorf("answers in a = %q, want \"a1 a2 live a3\" (each once)\n%s", got, dumpThread(f, a))
	}
	if got := answers(f, c, n[c]); got != "" {
		t.Errorf("answers in c = %q, want none past the limit\n%s", got, dumpThread(f, c))
	}
	for _, call := range f.callsTo("conversations.replies") {
		if call.Form.Get("ts") == b.Thread {
			t.Errorf("b's history was read (%v), want never", call.Form)
		}
	}
	second.stop(t)
}
