package session_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// TestSendMessageTool: the demo agent's send_message text is shown in
// order with the turn's own text, as a chat message of its own: neither
// it nor the text after it runs on in the message before.
func TestSendMessageTool(t *testing.T) {
	e := askEnv(t, channeltest.Options{Edit: true}, nil)
	th := e.rec.Thread("m")
	e.say(th, ann, "message hello from the tool")
	e.waitEnd(th)
	var got []string
	for _, m := range e.messages(th, channels.KindText) {
		got = append(got, m.Text)
	}
	if want := []string{"Before the message. ", "hello from the tool", "After the message."}; !slices.Equal(got, want) {
		t.Errorf("text messages = %q, want %q", got, want)
	}
}

// TestSendMessageToolBudget: send_message counts against the turn's
// acp.stream.maxTurnChars like the agent's own text: cut there, with the
// one truncation notice, and nothing after it.
func TestSendMessageToolBudget(t *testing.T) {
	p := session.DefaultPolicy()
	p.Stream.MaxTurnChars = 40
	e := askEnv(t, channeltest.Options{Edit: true}, &p)
	th := e.rec.Thread("m")
	e.say(th, ann, "message "+strings.Repeat("x", 100))
	e.waitEnd(th)
	if got, want := e.text(th), "Before the message. "+strings.Repeat("x", 20); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	n := 0
	for _, m := range e.rec.Messages() {
		if m.Thread == th && m.Kind != channels.KindText {
			n += strings.Count(m.Text, "Reply cut at 40 characters")
		}
	}
	if n != 1 {
		t.Errorf("%d truncation notices, want 1", n)
	}
}

// TestSendMessageAfterTheTurnRefused: an agent whose turn ended cannot
// go on posting with send_message (no turn's budget or stop would hold
// it): the tool is refused saying why, and nothing it sends shows after
// the turn's end.
func TestSendMessageAfterTheTurnRefused(t *testing.T) {
	p := session.DefaultPolicy()
	p.Stream.MaxTurnChars = 2000
	e := askEnv(t, channeltest.Options{Edit: true}, &p)
	th := e.rec.Thread("late")
	e.say(th, ann, "message-after 20 late news")
	e.waitEnd(th)
	refusedAfterTheTurn(t, e, "message-after")
	ended := false
	for _, op := range e.rec.OpsIn(th) {
		switch {
		case op.Op == "turn_end":
			ended = true
		case ended && strings.Contains(op.Text, "late news"):
			t.Errorf("posted after the turn's end: %+v", op)
		}
	}
}

// TestAskToolAfterTheTurnRefused: the ask tool outside a turn is
// refused too, and shows no question.
func TestAskToolAfterTheTurnRefused(t *testing.T) {
	e := askEnv(t, channeltest.Options{Edit: true, Prompt: true, Form: true}, nil)
	th := e.rec.Thread("late-ask")
	e.say(th, ann, "ask-after")
	e.waitEnd(th)
	refusedAfterTheTurn(t, e, "ask-after")
	for _, op := range e.rec.OpsIn(th) {
		if isForm(op) || isPrompt(op) {
			t.Errorf("a question was shown after the turn: %+v", op)
		}
	}
}

// refusedAfterTheTurn waits for the demo agent's scenario to log that it
// finished, and fails the test unless that line says it was refused for
// no turn running.
func refusedAfterTheTurn(t *testing.T, e *env, scenario string) {
	t.Helper()
	e.logs.waitFor(t, e.ctx(), scenario+" finished")
	var done string
	for line := range strings.Lines(e.logs.String()) {
		if strings.Contains(line, scenario+" finished") {
			done = line
		}
	}
	if !strings.Contains(done, "no turn is running") {
		t.Errorf("what the agent did after its turn (%s) was not refused: %s", scenario, done)
	}
}
