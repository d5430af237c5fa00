package session_test

import (
	"errors"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// TestPromptThatCannotBeShownIsCancelledAtOnce: a permission prompt the
// platform refuses is answered cancelled at once (not after
// permissions.timeout, 10 minutes, far past this test's 30 s), and the
// thread is told.
func TestPromptThatCannotBeShownIsCancelledAtOnce(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("unshown")
	e.rec.Inject(channeltest.InjectPrompt, channels.Permanent(errors.New("50035 invalid form body")))
	e.say(th, ann, "permission")
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Errorf("turn end %+v, want cancelled: the agent got the cancelled outcome", end)
	}
	e.waitOp(th, "the thread told", hasText("Cancelled: the prompt could not be shown in this thread"))
	if n := len(e.messages(th, channels.KindPermission)); n != 1 {
		t.Errorf("%d permission messages, want the one that says it was cancelled", n)
	}
}
