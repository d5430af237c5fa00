package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// A notification no client knows (Qwen's qwen/notify/session/* after each
// turn) is logged once per session at info, not as an error every turn
// (the harness's logger fails the test on the SDK's error records).
func TestUnknownNotificationLoggedOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "notify"}
	for range 3 {
		e.say(th, ann, "notify")
		e.waitEnd(th)
	}
	if !strings.HasSuffix(e.text(th), "That was a notification no client knows.") {
		t.Fatalf("text %q", e.text(th))
	}
	logs := e.logs.String()
	if n := strings.Count(logs, "notification the gateway does not know"); n != 1 {
		t.Errorf("the unknown notification was logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "level=INFO msg=\"the agent sent a notification the gateway does not know") || !strings.Contains(logs, "qwen/notify/session/prompt-suggestion") {
		t.Errorf("the log does not say so at info, with the method:\n%s", logs)
	}
}
