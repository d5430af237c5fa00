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
