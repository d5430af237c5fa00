package e2e

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
)

// quoted is how the gateway quotes a message's author and time.
func quoted(who string, at time.Time) string {
	return "> " + who + ", " + at.UTC().Format("2006-01-02 15:04 UTC") + ":\n"
}

// FirstPrompt waits for the end of the next turn in th and returns the
// first prompt the demo agent received in th's session; it fails the
// test unless there was exactly one.
func (g *Gateway) FirstPrompt(th channels.ThreadRef) string {
	g.t.Helper()
	g.WaitEnd(th)
	b, ok, err := g.Store.Binding(g.t.Context(), th)
	if err != nil || !ok {
		g.t.Fatalf("binding of %v: %v %v", th, ok, err)
	}
	prompts, err := sessiontest.Prompts(g.AgentState(), b.SessionID)
	if err != nil || len(prompts) != 1 {
		g.t.Fatalf("the agent's prompts in %v = %q, %v; want one", th, prompts, err)
	}
	return prompts[0]
}

// Mentioned inside a thread people had been talking in, the gateway
// reads the thread's last messages from the platform and the demo
// agent's first prompt starts with them, quoted with authors and times, a
// bot's marked, the gateway's own text marked as this bot's, the message
// the thread was started from first, within context.backfill (3
// messages, 50 characters); the gateway's own tool line (edited once),
// permission prompt and notice (posted by the adapter, of an earlier
// session there) left out and counted for nothing; for a person without
// access nothing is read, and their message is context all the same.
func testBackfill(t *testing.T, s Setup) {
	at := time.Date(2026, 11, 25, 20, 10, 0, 0, time.UTC)
	bob := Bob
	self, other := s.Names()

	// Said before the gateway was mentioned (and before it ran).
	build, _ := s.Started(t, Bob, "too old to be read", at)
	s.Said(t, &bob, build, "the build fails on main since this morning", at.Add(time.Minute)) // 42 characters: over the 50 with the next two
	t2 := s.Said(t, nil, build, "build #12 failed", at.Add(2*time.Minute))
	t3 := s.Said(t, &bob, build, "any idea?", at.Add(3*time.Minute))
	deploy, t0 := s.Started(t, Bob, "deploy hangs", at)
	t1 := s.Said(t, nil, deploy, "job 7 stuck", at.Add(time.Minute))

	policy := session.DefaultPolicy()
	policy.Context.Backfill = session.Backfill{Messages: 3, Chars: 50}
	var t4 time.Time
	g := s.start(t, Config{
		Access: session.AccessRule{Users: []string{s.UserID(Ann)}},
		Policy: &policy,
		// The gateway's own posts of an earlier session in the thread:
		// the agent's answer, a tool line, a permission prompt and a
		// notice.
		Before: func(a channels.Adapter) {
			ctx := t.Context()
			for i, m := range []channels.Message{
				{Kind: channels.KindText, Text: "looking"},
				{Kind: channels.KindTool, Text: "🛠️ Run `ls` · running"},
				{Kind: channels.KindPermission},
				{Kind: channels.KindNotice, Text: "⚙️ Stopped."},
			} {
				var h channels.Handle
				var err error
				if m.Kind == channels.KindPermission {
					pr, _ := channels.As[channels.Prompter](a)
					h, err = pr.Prompt(ctx, build, channels.Choice{Text: "Allow `rm -rf build`?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
				} else {
					h, err = a.Post(ctx, build, m)
				}
				if err == nil && m.Kind == channels.KindTool {
					ed, _ := channels.As[channels.Editor](a)
					err = ed.Edit(ctx, h, channels.Message{Kind: channels.KindTool, Text: "🛠️ Run `ls` · done"})
				}
				if err != nil {
					t.Fatal(err)
				}
				if when := s.Dated(build, h.ID, at.Add(4*time.Minute+time.Duration(i)*time.Second)); i == 0 {
					t4 = when
				}
			}
		},
	})

	// Bob may not prompt: his mention is refused and nothing is read.
	reads := s.HistoryReads(deploy)
	t5 := s.MentionIn(t, g.Ctx(), Bob, deploy, "why?")
	g.Wait("the refusal", func() bool { return s.Refusals(Bob, deploy) > 0 })
	if n := s.HistoryReads(deploy); n != reads {
		t.Errorf("%d history reads for a person without access, want none", n-reads)
	}

	s.MentionIn(t, g.Ctx(), Ann, build, "echo hello")
	want := "Earlier messages in this thread, for context (oldest first; older ones left out):\n" +
		quoted(other+" (bot)", t2) + "> build #12 failed\n" +
		quoted("Bob", t3) + "> any idea?\n" +
		quoted(self+" (this bot)", t4) + "> looking\n" +
		"\necho hello"
	if got := g.FirstPrompt(build); got != want {
		t.Errorf("the agent's first prompt:\n%s\nwant:\n%s", got, want)
	}
	if s.HistoryReads(build) == 0 {
		t.Error("the thread's history was not read")
	}

	s.MentionIn(t, g.Ctx(), Ann, deploy, "echo hi")
	want = "Earlier messages in this thread, for context (oldest first):\n" +
		quoted("Bob", t0) + "> deploy hangs\n" +
		quoted(other+" (bot)", t1) + "> job 7 stuck\n" +
		quoted("Bob", t5) + "> why?\n" + // refused as a prompt, said in the thread all the same
		"\necho hi"
	if got := g.FirstPrompt(deploy); got != want {
		t.Errorf("the first prompt in a thread started from a message:\n%s\nwant:\n%s", got, want)
	}
}
