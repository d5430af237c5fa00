package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// TestWithheldVariableIsToldInTheThread: a variable of the agent's
// configuration that the gateway keeps from it (its value is a secret) is
// named in the thread, with why, once: not again when the agent is
// started again after a crash. What the agent is not given it does not
// see.
func TestWithheldVariableIsToldInTheThread(t *testing.T) {
	const secret = "xoxb-a-platform-token-0123456789"
	spec := demoSpec(t.TempDir(), "OPENAI_BASE_URL=http://127.0.0.1:18601/v1", "LEAKED_TOKEN=Bearer "+secret)
	spec.Secrets = []string{secret}
	e := newEnv(t, envOptions{spec: &spec, rec: channeltest.Options{Edit: true}})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "env"}
	told := func() int {
		n := 0
		for _, m := range e.messages(th, channels.KindNotice) {
			if strings.Contains(m.Text, "started without the environment variable `LEAKED_TOKEN`: its value is a secret") {
				n++
			}
		}
		return n
	}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.waitOp(th, "the withheld variable named", hasText("started without the environment variable `LEAKED_TOKEN`"))
	e.say(th, ann, "crash")
	e.waitEnd(th)
	e.say(th, ann, "echo once more")
	e.waitEnd(th)
	if !strings.HasSuffix(e.text(th), "once more") {
		t.Fatalf("text %q", e.text(th))
	}
	if n := told(); n != 1 {
		t.Errorf("the withheld variable was told %d times, want once", n)
	}
	for _, m := range e.messages(th, channels.KindNotice) {
		if strings.Contains(m.Text, "OPENAI_BASE_URL") || strings.Contains(m.Text, secret) {
			t.Errorf("a notice names what is not withheld, or the secret: %q", m.Text)
		}
	}
}
