package store

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func TestRunningTurns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	a := channels.ThreadRef{Platform: "slack", Channel: "C", Thread: "1"}
	b := channels.ThreadRef{Platform: "discord", Channel: "D", Thread: "2"}
	for _, r := range []RunningTurn{
		{Thread: a, SessionID: "s1", Started: ms(1000)},
		{Thread: b, SessionID: "s2", Started: ms(500)},
		{Thread: a, SessionID: "s1", Started: ms(2000)}, // a's next prompt: a mark of its own
	} {
		if err := s.MarkTurnRunning(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RunningTurns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []RunningTurn{{Thread: b, SessionID: "s2", Started: ms(500)}, {Thread: a, SessionID: "s1", Started: ms(1000)}, {Thread: a, SessionID: "s1", Started: ms(2000)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("running turns (-want +got):\n%s", diff)
	}
	// Clearing an earlier turn's mark keeps the later one.
	if err := s.ClearTurnRunning(ctx, a, ms(1000)); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearTurnRunning(ctx, b, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.RunningTurns(ctx)
	if diff := cmp.Diff(want[2:], got); diff != "" {
		t.Errorf("after clearing (-want +got):\n%s", diff)
	}
	if err := s.ClearTurnRunning(ctx, a, ms(2000)); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.RunningTurns(ctx); len(got) != 0 {
		t.Errorf("after clearing all: %v", got)
	}
}
