package slack

import (
	"context"
	"path/filepath"
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

// TestBackfillE2E: mentioned inside a thread people had been talking in,
// the gateway reads the thread with conversations.replies and the demo
// agent's first prompt starts with its last messages, quoted with
// authors and times (from their ts), a bot's marked, the app's own text
// marked as this bot's, the thread's first
// message among them, within context.backfill (3 messages, 50
// characters), the app's own tool line (edited once), permission prompt
// and notice (posted by the adapter, of an earlier session there) left
// out and counted for nothing; for a person without access nothing is
// read.
func TestBackfillE2E(t *testing.T) {
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

	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "demo-state")
	spec := sessiontest.DemoAgent(state, demoAgentEnv)
	ends := sessiontest.NewTurnEnds()
	policy := session.DefaultPolicy()
	policy.Context.Backfill = session.Backfill{Messages: 3, Chars: 50}
	a := f.adapter(t, Options{
		KnownThread: func(ctx context.Context, th channels.ThreadRef) bool {
			_, ok, err := st.Binding(ctx, th)
			return ok && err == nil
		},
		HistoryInterval: -1,
		Streaming:       StreamingEdits, // each of the app's posts a message of its own
	})
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	r := session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Access:      map[string]session.AccessRule{Platform: {Workspaces: []string{f.team}, Users: []string{ann}}},
		OnTurnEnd:   ends.Record,
		Policy:      func(channels.ThreadRef, string) session.Policy { return policy },
	})
	r.Add(Platform, a)
	runCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(runCtx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	wg.Go(func() { _ = r.Run(runCtx) })
	t.Cleanup(func() {
		stop()
		wg.Wait()
		st.Close()
	})

	say := func(o sayOptions) string {
		t.Helper()
		s, err := f.say(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return s.ts
	}
	// Two threads people talk in, the gateway not mentioned.
	build := say(sayOptions{user: bob, text: "too old to be read"})
	say(sayOptions{user: bob, thread: build, text: "the build fails on main since this morning"}) // 42 characters: over the 50 with the next two
	say(sayOptions{thread: build, botID: "B0CI", text: "build #12 failed"})
	say(sayOptions{user: bob, thread: build, text: "any idea?"})
	// The app's own posts of an earlier session there: the agent's
	// answer, a tool line, a permission prompt and a notice.
	th := ref(fakeChannel, build)
	if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "looking"}); err != nil {
		t.Fatal(err)
	}
	tool, err := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Text: "🛠️ Run `ls` · running"})
	if err == nil {
		err = a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Text: "🛠️ Run `ls` · done"})
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(ctx, th, channels.Choice{Text: "Allow `rm -rf build`?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindNotice, Text: "⚙️ Stopped."}); err != nil {
		t.Fatal(err)
	}
	deploy := say(sayOptions{user: bob, text: "deploy is stuck"})

	// Bob may not prompt: he is refused and nothing is read.
	say(sayOptions{user: bob, thread: deploy, text: "what now?", mention: true})
	refused := func() bool { // f.mu held
		for _, e := range f.ephemerals {
			if e.User == bob && e.ThreadTS == deploy {
				return true
			}
		}
		return false
	}
	if err := f.waitFor(ctx, "the refusal", refused); err != nil {
		t.Fatal(err)
	}
	if n := len(f.callsTo("conversations.replies")); n != 0 {
		t.Errorf("%d conversations.replies calls for a person without access, want none", n)
	}

	firstPrompt := func(th channels.ThreadRef) string {
		t.Helper()
		if _, ok := ends.Next(ctx, th); !ok {
			t.Fatalf("no turn end in %v; thread:\n%s", th, dumpThread(f, th))
		}
		b, ok, err := st.Binding(ctx, th)
		if err != nil || !ok {
			t.Fatalf("binding of %v: %v %v", th, ok, err)
		}
		prompts, err := sessiontest.Prompts(state, b.SessionID)
		if err != nil || len(prompts) != 1 {
			t.Fatalf("the agent's prompts = %q, %v; want one", prompts, err)
		}
		return prompts[0]
	}
	when := tsTime(build).Format("2006-01-02 15:04 UTC") // the fake's ts are all in one minute

	say(sayOptions{user: ann, thread: build, text: "echo hello", mention: true})
	want := "Earlier messages in this thread, for context (oldest first; older ones left out):\n" +
		"> B0CI (bot), " + when + ":\n> build #12 failed\n" +
		"> Bob, " + when + ":\n> any idea?\n" +
		"> U0BOT (this bot), " + when + ":\n> looking\n" +
		"\necho hello"
	if got := firstPrompt(ref(fakeChannel, build)); got != want {
		t.Errorf("first prompt in the build thread:\n%s\nwant:\n%s", got, want)
	}
	if n := len(f.callsTo("conversations.replies")); n == 0 {
		t.Error("the thread was not read with conversations.replies")
	}

	say(sayOptions{user: ann, thread: deploy, text: "echo hi", mention: true})
	want = "Earlier messages in this thread, for context (oldest first):\n" +
		"> Bob, " + when + ":\n> deploy is stuck\n" +
		"> Bob, " + when + ":\n> what now?\n" + // refused as a prompt, said in the thread all the same
		"\necho hi"
	if got := firstPrompt(ref(fakeChannel, deploy)); got != want {
		t.Errorf("first prompt in the deploy thread (its first message is context):\n%s\nwant:\n%s", got, want)
	}
}
