package slack

import (
	"errors"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/slack-go/slack"
)

// A method's first call goes alone: until Slack has answered it, the
// other threads wait in line, so that a budget another process spent is
// met by one call; an answer that is not a 429 lets the burst go.
func TestTierProbeGoesAlone(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	l := newLimits()
	if _, err := l.take("chat.startStream", "C1/1", now); err != nil {
		t.Fatalf("the first call: %v", err)
	}
	_, err := l.take("chat.startStream", "C1/2", now)
	if rl, ok := errors.AsType[*channels.RateLimitError](err); !ok || rl.RetryAfter < probeWait {
		t.Fatalf("a second thread's call while the first is in flight: %v, want a wait of %v or more", err, probeWait)
	}
	if _, err := l.take("users.info", "", now); err != nil {
		t.Errorf("a call no thread waits for held back by a probe: %v", err)
	}
	l.answered("chat.startStream", true, now)
	for i := range 5 {
		if _, err := l.take("chat.startStream", "C1/"+string(rune('2'+i)), now); err != nil {
			t.Fatalf("call %d once the budget is known: %v", i+2, err)
		}
	}
}

// A 429 makes the method unknown again and drops the calls held for
// callers (they were counted from a budget that was not there): after
// Retry-After one call goes, alone.
func TestTierLearnForgetsHeldCalls(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	l := newLimits()
	l.answered("chat.startStream", true, now)
	if _, err := l.take("chat.startStream", "C1/1", now); err != nil {
		t.Fatal(err)
	}
	l.hold("chat.startStream", "C1/1", time.Second, now) // its channel's pace held it back
	l.learn("chat.startStream", 3*time.Second, now)
	if _, err := l.take("chat.startStream", "C1/1", now.Add(time.Second)); err == nil {
		t.Fatal("a call held before the 429 went while Slack said to wait")
	}
	at := now.Add(3*time.Second + time.Millisecond)
	if _, err := l.take("chat.startStream", "C1/1", at); err != nil {
		t.Fatalf("after Retry-After: %v", err)
	}
	if _, err := l.take("chat.startStream", "C1/2", at.Add(3*time.Second)); err == nil {
		t.Error("a second call went while the first after a 429 was not answered")
	}
}

// The adapter's transport tells the limits how Slack answered: a 200
// ends the probe and makes the budget known.
func TestTierTransportEndsTheProbe(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	const method = "assistant.threads.setStatus"
	if _, err := a.limits.take(method, "C1/1", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.limits.take(method, "C1/2", time.Now()); err == nil {
		t.Fatal("a second call went while the first was not answered")
	}
	// The first call, answered by Slack (whatever it says but 429).
	_ = a.api.SetAssistantThreadsStatusContext(t.Context(), slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: "1", Status: "is working…"})
	if _, err := a.limits.take(method, "C1/2", time.Now()); err != nil {
		t.Errorf("after Slack answered the first call: %v", err)
	}
}
