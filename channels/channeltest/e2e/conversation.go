package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/session"
)

// A conversation with the agent: a mention opens a thread and the answer
// streams into it with edits; later messages need no mention; each tool
// call is one message (how often it is edited as it goes is the
// platform's pacing: each adapter's tests); a permission prompt
// refuses a non-approver's click privately and keeps its buttons, and
// the approver's click answers it; "stop" cancels a running turn.
func testConversation(t *testing.T, s Setup) {
	g := s.start(t, Config{Access: session.AccessRule{Approvers: []string{s.UserID(Ann)}}})

	th := g.Mention(Ann, "slow 40")
	if got := g.WaitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	ms := g.Messages(th)
	if got, want := AnswerText(ms), strings.TrimSpace(demoagent.SlowAnswer(40)); got != want {
		t.Errorf("answer = %q, want %q\n%s", got, want, g.Dump(th))
	}
	if !slices.ContainsFunc(ms, func(m Message) bool { return s.Edits(th, m.ID) > 0 }) {
		t.Errorf("no message was edited while the answer streamed:\n%s", g.Dump(th))
	}

	// Tools, from someone who may prompt: one message per tool call.
	n := len(g.Messages(th))
	g.Say(Bob, th, "tools")
	if got := g.WaitEnd(th); got != "end_turn" {
		t.Fatalf("tools turn ended with %q", got)
	}
	var tools []string
	for _, m := range g.Since(th, n) {
		if strings.HasPrefix(m.Text, "🛠") || strings.HasPrefix(m.Text, "📖") {
			tools = append(tools, m.Text)
		}
	}
	if want := []string{"🛠️ Run ls -la · done", "📖 Read main.go · done", "🛠️ go test ./... · failed"}; !slices.Equal(tools, want) {
		t.Errorf("tool messages %q, want %q; thread:\n%s", tools, want, g.Dump(th))
	}

	// A permission prompt: a non-approver's click is refused privately
	// and the buttons stay; the approver's click answers, the buttons go,
	// and the tool's message is edited in place.
	n = len(g.Messages(th))
	g.Say(Ann, th, "permission")
	prompt := g.WaitPrompt(th, n)
	edit := g.WaitText(th, n, "Edit main.go · pending")
	if got, private := s.Click(t, g.Ctx(), Bob, th, prompt, "/allow_once")("only approvers"); !private {
		t.Errorf("the refusal of Bob's click = %q, in the thread; want it private", got)
	}
	if m, _ := g.Message(th, prompt.ID); !m.Controls {
		t.Fatal("the prompt lost its buttons after a refused click")
	}
	s.Click(t, g.Ctx(), Ann, th, prompt, "/allow_once")
	if got := g.WaitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q after the approval", got)
	}
	if m, _ := g.Message(th, prompt.ID); m.Controls || !strings.Contains(m.Text, "chosen by Ann") {
		t.Errorf("answered prompt = %q (controls %t), want the decision without buttons", m.Text, m.Controls)
	}
	if !strings.Contains(AnswerText(g.Since(th, n)), "Applied the edit.") {
		t.Errorf("no 'Applied the edit.' after the approval:\n%s", g.Dump(th))
	}
	if m, _ := g.Message(th, edit.ID); m.Text != "✏️ Edit main.go · done" || s.Edits(th, edit.ID) == 0 {
		t.Errorf("tool message = %q after %d edits, want it edited in place to done", m.Text, s.Edits(th, edit.ID))
	}

	// "stop" cancels a running turn, soon.
	n = len(g.Messages(th))
	g.Say(Ann, th, "slow 400")
	slow := g.WaitMessage(th, n, "the slow answer", func(m Message) bool { return strings.HasPrefix(m.Text, "the quick brown") })
	g.Say(Ann, th, "stop")
	if got := g.WaitEnd(th); got != "cancelled" {
		t.Fatalf("stop reason %q after stop, want cancelled", got)
	}
	g.WaitText(th, n, "Stopped by Ann.")
	if m, _ := g.Message(th, slow.ID); len(m.Text) > len(demoagent.SlowAnswer(200)) {
		t.Errorf("the stopped turn wrote %d characters; the stop came late", len(m.Text))
	}
}
