package thread

import (
	"testing"
	"time"
)

// TestStallWatch drives the watch with a virtual clock: told once per
// silence, output starts a new silence, and the next check is when the
// current silence would reach the limit.
func TestStallWatch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	w := stallWatch{after: 5 * time.Minute, last: t0}
	type step struct {
		at     time.Duration
		output bool
		tell   bool
		next   time.Duration
		rearm  bool // for an output step
	}
	steps := []step{
		{at: time.Minute, next: 4 * time.Minute},
		{at: 2 * time.Minute, output: true},               // output before the limit: no rearm needed
		{at: 5 * time.Minute, next: 2 * time.Minute},      // 3 minutes of silence so far
		{at: 7 * time.Minute, tell: true},                 // 5 minutes: told
		{at: 8 * time.Minute},                             // still silent: not told again, no more checks
		{at: 30 * time.Minute},                            // however long
		{at: 31 * time.Minute, output: true, rearm: true}, // output: a new silence
		{at: 32 * time.Minute, next: 4 * time.Minute},
		{at: 36 * time.Minute, tell: true},
	}
	for _, s := range steps {
		if s.output {
			if got := w.output(at(s.at)); got != s.rearm {
				t.Errorf("at %v: output rearm = %v, want %v", s.at, got, s.rearm)
			}
			continue
		}
		tell, next := w.check(at(s.at))
		if tell != s.tell || next != s.next {
			t.Errorf("at %v: check = %v, %v; want %v, %v", s.at, tell, next, s.tell, s.next)
		}
	}
}

func TestStallNoticeText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{5 * time.Minute, `No output from the agent for 5 minutes. Say "stop" to cancel the turn.`},
		{time.Minute, `No output from the agent for 1 minute. Say "stop" to cancel the turn.`},
		{2 * time.Hour, `No output from the agent for 2 hours. Say "stop" to cancel the turn.`},
		{90 * time.Second, `No output from the agent for 90 seconds. Say "stop" to cancel the turn.`},
		{1500 * time.Millisecond, `No output from the agent for 1.5s. Say "stop" to cancel the turn.`},
	}
	for _, tc := range tests {
		if got := stallNotice(tc.d); got != tc.want {
			t.Errorf("stallNotice(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
