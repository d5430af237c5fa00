package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// Steering the session from the platform. What the agent received is
// read on the agent's side: its session files (the demo agent saves a
// set option before it answers) and its replies; what the gateway sent
// it, in the gateway's event logs.

// agentModels returns the model saved in each of the demo agent's
// session files ("" the default).
func (g *Gateway) agentModels() []string {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.AgentState(), "demo-*.json"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			g.t.Fatal(err)
		}
		var r struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			g.t.Fatalf("%s: %v", f, err)
		}
		out = append(out, r.Model)
	}
	return out
}

// framesWith counts the frames of the gateway's event logs that contain
// sub.
func (g *Gateway) framesWith(sub string) int {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.Dir, "events", "*"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			g.t.Fatal(err)
		}
		n += strings.Count(string(b), sub)
	}
	return n
}

const setConfigFrame = `"method":"session/set_config_option"`

// The model command, in both of the platform's forms, reaches
// session/set_config_option in the demo agent; a non-operator's is
// refused to them alone and reaches nothing; status shows what the agent
// reported back.
func testSteerModel(t *testing.T, s Setup) {
	g := s.start(t, Config{Access: session.AccessRule{Approvers: []string{s.UserID(Ann)}}})
	th := g.Mention(Ann, "hello")
	g.WaitEnd(th)
	models := func(what, want string) {
		t.Helper()
		if got := g.agentModels(); len(got) != 1 || got[0] != want {
			t.Fatalf("the agent's models %s = %q, want one session with %q", what, got, want)
		}
	}
	sets := func(what string, want int) {
		t.Helper()
		if n := g.framesWith(setConfigFrame); n != want {
			t.Errorf("%d session/set_config_option requests %s, want %d", n, what, want)
		}
	}
	models("at the start", "")

	n := len(g.Messages(th))
	s.Command(t, g.Ctx(), Ann, th, Native, "model demo-smart")
	g.WaitText(th, n, "Ann set the model to Demo Smart.")
	models("after the model command demo-smart", "demo-smart")
	sets("after Ann's command", 1)

	// A non-operator, in both forms: refused, nothing reaches the agent.
	n = len(g.Messages(th))
	const refusal = "only operators can use /model"
	reply := s.Command(t, g.Ctx(), Bob, th, Native, "model demo-fast")
	if got, private := reply(refusal); !private {
		t.Errorf("Bob's model command was refused in the thread (%q), want privately", got)
	}
	_, private := s.Command(t, g.Ctx(), Bob, th, Typed, "model demo-fast")(refusal)
	models("after Bob's commands", "demo-smart")
	sets("after Bob's commands", 1)
	if private {
		for _, m := range g.Since(th, n) {
			if strings.Contains(m.Text, "Bob") {
				t.Errorf("Bob's refusal was posted in the thread: %q", m.Text)
			}
		}
	}

	// The other form.
	n = len(g.Messages(th))
	s.Command(t, g.Ctx(), Ann, th, Typed, "model demo-fast")
	g.WaitText(th, n, "Ann set the model to Demo Fast.")
	models("after the typed model command demo-fast", "demo-fast")
	sets("after Ann's second command", 2)

	// Status shows what the agent reported back.
	s.Command(t, g.Ctx(), Bob, th, Native, "status")("Demo Fast")
}

// An agent's questions answered on the platform: a choice and a text
// question; the agent's reply says the answer.
func testSteerQuestions(t *testing.T, s Setup) {
	g := s.start(t, Config{Access: session.AccessRule{Approvers: []string{s.UserID(Ann)}}})
	form := func(th channels.ThreadRef, n int, question string) Message {
		t.Helper()
		return g.WaitMessage(th, n, "the form of "+question, func(m Message) bool {
			return m.Controls && strings.Contains(m.Text, question)
		})
	}

	th := g.Mention(Ann, "ask-choice")
	m := form(th, 0, "Which color should the button be?")
	s.Fill(t, g.Ctx(), Ann, th, m, []Field{{Label: "Color", Value: "green", Choices: []string{"red", "green", "blue"}}})
	if got := g.WaitEnd(th); got != "end_turn" {
		t.Fatalf("ask-choice ended with %q", got)
	}
	if got := AnswerText(g.Messages(th)); !strings.Contains(got, "You chose green.") {
		t.Errorf("answer = %q, want the agent to say green\n%s", got, g.Dump(th))
	}

	n := len(g.Messages(th))
	g.Say(Ann, th, "ask-text")
	m = form(th, n, "Tell me about the release.")
	s.Fill(t, g.Ctx(), Ann, th, m, []Field{{Label: "Release name", Value: "Aurora"}, {Label: "Retries", Value: "3"}})
	if got := g.WaitEnd(th); got != "end_turn" {
		t.Fatalf("ask-text ended with %q", got)
	}
	if got := AnswerText(g.Since(th, n)); !strings.Contains(got, "Release Aurora with 3 retries.") {
		t.Errorf("answer = %q, want the agent to echo the release\n%s", got, g.Dump(th))
	}
}
