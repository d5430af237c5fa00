package slack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// Steering the session from Slack, end to end: the real slack-go client
// against the fake over Socket Mode, the session router, and the demo
// agent as a subprocess. What the agent received is read on the agent's
// side: its session file (the demo agent saves a set option before it
// answers) and its replies.

// agentModels returns the model saved in each of the demo agent's
// session files ("" the default).
func (g *gateway) agentModels() []string {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.dir, "demo-state", "demo-*.json"))
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
func (g *gateway) framesWith(sub string) int {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.dir, "events", "*"))
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

// waitEphemeral waits for a private message to user in thread whose text
// contains sub.
func (g *gateway) waitEphemeral(user, thread, sub string) {
	g.t.Helper()
	err := g.f.waitFor(g.ctx(), "a private message with "+sub, func() bool {
		for _, e := range g.f.ephemerals {
			if e.User == user && e.ThreadTS == thread && strings.Contains(e.Text, sub) {
				return true
			}
		}
		return false
	})
	if err != nil {
		g.t.Fatal(err)
	}
}

// openModal has user press Answer on form message ts until the adapter
// opens its modal, and returns the modal. The adapter knows a form once
// Slack has answered the request that posted it; the fake shows the
// message to the test before that answer arrives, so a test (never a
// person) can press too early and be told the question is no longer
// open.
func (g *gateway) openModal(user string, th channels.ThreadRef, ts string) fakeView {
	g.t.Helper()
	notOpen := func() int {
		n := 0
		for _, e := range g.f.ephemerals {
			if e.User == user && strings.Contains(e.Text, "no longer open") {
				n++
			}
		}
		return n
	}
	for range 100 {
		g.f.mu.Lock()
		views, refusals := len(g.f.views), notOpen()
		g.f.mu.Unlock()
		if _, err := g.f.click(g.ctx(), user, th.Channel, ts, formAnswer); err != nil {
			g.t.Fatal(err)
		}
		err := g.f.waitFor(g.ctx(), "a modal or a refusal", func() bool { return len(g.f.views) > views || notOpen() > refusals })
		if err != nil {
			g.t.Fatal(err)
		}
		if vs := g.f.openedViews(); len(vs) > views {
			return vs[len(vs)-1]
		}
	}
	g.t.Fatal("the form never opened")
	return fakeView{}
}

const setConfigFrame = `"method":"session/set_config_option"`

// "!model value" and "@app model value" reach session/set_config_option
// in the demo agent; a non-operator's is refused privately and reaches
// nothing.
func TestSteerModelEndToEnd(t *testing.T) {
	g := newGateway(t)
	s := g.say(ann, "", "hello", true)
	th := ref(fakeChannel, s.ts)
	g.waitEnd(th)
	if got := g.agentModels(); len(got) != 1 || got[0] != "" {
		t.Fatalf("the agent's models at the start = %q, want one session with the default", got)
	}

	since := g.mark(th)
	g.say(ann, s.ts, "!model demo-smart", false)
	g.waitMessage(th, since, "Ann set the model to Demo Smart.")
	if got := g.agentModels(); len(got) != 1 || got[0] != "demo-smart" {
		t.Fatalf("the agent's models after !model demo-smart = %q, want demo-smart", got)
	}
	if n := g.framesWith(setConfigFrame); n != 1 {
		t.Errorf("%d session/set_config_option requests, want 1", n)
	}

	// A non-operator, with the prefix and after a mention: refused
	// privately, nothing reaches the agent.
	g.say(bob, s.ts, "!model demo-fast", false)
	g.waitEphemeral(bob, s.ts, "only operators can use /model")
	g.say(bob, s.ts, "model demo-fast", true)
	err := g.f.waitFor(g.ctx(), "two refusals", func() bool {
		n := 0
		for _, e := range g.f.ephemerals {
			if e.User == bob && strings.Contains(e.Text, "only operators can use /model") {
				n++
			}
		}
		return n == 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.agentModels(); len(got) != 1 || got[0] != "demo-smart" {
		t.Errorf("the agent's models after Bob's commands = %q, want demo-smart still", got)
	}
	if n := g.framesWith(setConfigFrame); n != 1 {
		t.Errorf("%d session/set_config_option requests after Bob's commands, want 1", n)
	}
	for _, m := range g.messages(th) {
		if m.TS > since && strings.Contains(m.Text, "Bob") {
			t.Errorf("Bob's refusal was posted in the thread: %q", m.Text)
		}
	}

	// After a mention of the app.
	since = g.mark(th)
	g.say(ann, s.ts, "model demo-fast", true)
	g.waitMessage(th, since, "Ann set the model to Demo Fast.")
	if got := g.agentModels(); len(got) != 1 || got[0] != "demo-fast" {
		t.Fatalf("the agent's models after @app model demo-fast = %q, want demo-fast", got)
	}
	if n := g.framesWith(setConfigFrame); n != 2 {
		t.Errorf("%d session/set_config_option requests, want 2", n)
	}

	// !status shows what the agent reported back.
	g.say(bob, s.ts, "!status", false)
	g.waitEphemeral(bob, s.ts, "Demo Fast")
}

// An agent's questions answered on Slack: the modal's select answers a
// choice, its text inputs a text question; the agent's reply says the
// answer.
func TestSteerQuestionsEndToEnd(t *testing.T) {
	g := newGateway(t)
	s := g.say(ann, "", "ask-choice", true)
	th := ref(fakeChannel, s.ts)
	form := g.waitMessage(th, "", "Which color should the button be?")
	v := g.openModal(ann, th, form.TS)
	if !strings.Contains(string(v.View), `"static_select"`) {
		t.Fatalf("the choice's modal has no select: %s", v.View)
	}
	if _, err := g.f.submitView(g.ctx(), v, map[string]string{"Color": "green"}); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("ask-choice ended %+v", end)
	}
	g.waitMessage(th, form.TS, "You chose green.")

	since := g.mark(th)
	g.say(ann, s.ts, "ask-text", false)
	form = g.waitMessage(th, since, "Tell me about the release.")
	v = g.openModal(ann, th, form.TS)
	if _, err := g.f.submitView(g.ctx(), v, map[string]string{"Release name": "Aurora", "Retries": "3"}); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("ask-text ended %+v", end)
	}
	g.waitMessage(th, form.TS, "Release Aurora with 3 retries.")
}
