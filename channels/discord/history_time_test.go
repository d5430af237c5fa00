package discord

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// TestMessageTimes: a message carries the time Discord gives it
// ("timestamp"), delivered live and read back from the history (the
// quoted context of a thread shows it).
func TestMessageTimes(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	th := f.threadRef()
	id := f.say(ann, f.thread, "one", false)
	live := s.next(t)
	f.mu.Lock()
	sent := f.msgs[id].Time
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	f.msgs[id].Time = when // as history reads it from now on
	f.mu.Unlock()
	if live.ID != channels.MessageID(id) || !live.Time.Equal(sent) {
		t.Errorf("live message %s at %v, want %s at %v", live.ID, live.Time, id, sent)
	}
	p, err := s.a.MessagesAfter(ctx, th, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 || p.Messages[0].ID != channels.MessageID(id) || !p.Messages[0].Time.Equal(when) {
		t.Fatalf("history = %+v, want message %s at %v", p.Messages, id, when)
	}
}
