package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// TestStallNotice: an agent that says nothing for agents.stallTimeout
// during a turn gets one notice in the thread; "stop" still cancels it.
func TestStallNotice(t *testing.T) {
	e := newEnv(t, envOptions{
		rec:    channeltest.Options{Edit: true, Typing: true},
		limits: session.Limits{StallTimeout: 100 * time.Millisecond},
	})
	th := e.rec.Thread("stall")
	e.say(th, ann, "silent 600")
	const notice = `⚙️ No output from the agent for 100ms. Say "stop" to cancel the turn.`
	e.waitOp(th, "the stall notice", hasText(notice))
	e.say(th, ann, "stop")
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Errorf("stop reason %q, want cancelled", end.StopReason)
	}
	var told int
	for _, m := range e.messages(th, channels.KindNotice) {
		if strings.Contains(m.Text, notice) {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times, want once for one silence", told)
	}
	// The next turn talks: nothing to tell.
	e.say(th, ann, "echo fine")
	e.waitEnd(th)
	if !strings.HasSuffix(e.text(th), "fine") {
		t.Errorf("text %q", e.text(th))
	}
}
