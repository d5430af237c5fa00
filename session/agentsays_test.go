package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// An agent that cannot start a session and says why (Auggie: log in from
// a terminal, with no authentication method over ACP): its own words reach
// the thread, marked as its words and escaped, and the log.
func TestAgentsOwnRefusalReachesTheThread(t *testing.T) {
	const says = "Authentication required: Auggie does not currently support authenticating over ACP. Please run `auggie login` from your terminal then try again."
	spec := demoSpec(t.TempDir())
	spec.Command = append(spec.Command, "--login-message", says)
	e := newEnv(t, envOptions{spec: &spec})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "auggie"}
	e.say(th, ann, "hello")
	op := e.waitOp(th, "the start failure", hasText("Couldn't start the agent"))
	want := "it answered session/new with error -32000, asking to authenticate in a way the gateway cannot (it offers no method over ACP). The agent says: ``" + says + "``"
	if !strings.Contains(op.Text, want) {
		t.Errorf("the thread was told %q, want it to hold %q", op.Text, want)
	}
	e.logs.waitFor(t, e.ctx(), "auggie login")
}
