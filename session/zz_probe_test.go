package session_test

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

func TestProbeStopNotices(t *testing.T) {
	for _, edit := range []bool{true, false} {
		for i := 0; i < 5; i++ {
			e := newEnv(t, envOptions{rec: channeltest.Options{Edit: edit, Typing: true, Prompt: true, Limits: channels.Limits{MinEditInterval: 250 * time.Millisecond}}})
			th := e.rec.Thread("s")
			e.say(th, ann, "slow 400")
			e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText })
			e.say(th, ann, "Stop!")
			e.waitEnd(th)
			e.waitOp(th, "typing stopped", isTypingStop)
			for _, n := range e.messages(th, channels.KindNotice) {
				t.Logf("edit=%v %d: %q", edit, i, n.Text)
			}
		}
	}
}
