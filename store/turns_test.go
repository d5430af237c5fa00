package store

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func TestTurns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	th := channels.ThreadRef{Platform: "slack", Channel: "C", Thread: "1"}
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	turns := []Turn{
		{Thread: th, SessionID: "s1", StopReason: "end_turn", Started: ms(1000), Ended: ms(2000),
			Used: 1200, Size: 200000, UsedKnown: true, SizeKnown: true,
			Cost: 0.25, Currency: "USD", CostKnown: true, PromptChars: 10, ReplyChars: 500},
		{Thread: th, SessionID: "s1", Error: "agent exited", Started: ms(3000), Ended: ms(3500), PromptChars: 3},
		{Thread: th, SessionID: "s1", StopReason: "cancelled", Started: ms(4000), Ended: ms(4100),
			Cost: 0.5, Currency: "USD", CostKnown: true, Used: 0, UsedKnown: true},
		{Thread: th, SessionID: "s1", StopReason: "end_turn", Cost: 3, Currency: "EUR", CostKnown: true},
		{Thread: th, SessionID: "s2", StopReason: "end_turn", Cost: 9, Currency: "USD", CostKnown: true},
	}
	for _, tu := range turns {
		if err := s.AddTurn(ctx, tu); err != nil {
			t.Fatal(err)
		}
	}
	// Replacing turn 2 of s1.
	fixed := turns[1]
	fixed.Seq, fixed.Error, fixed.StopReason = 2, "", "refusal"
	if err := s.AddTurn(ctx, fixed); err != nil {
		t.Fatal(err)
	}

	want := []Turn{turns[0], fixed, turns[2], turns[3]}
	for i := range want {
		want[i].Seq = i + 1
	}
	got, err := s.Turns(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Turns(s1) (-want +got):\n%s", diff)
	}

	tests := []struct {
		session string
		want    Usage
	}{
		// USD 0.25 then 0.5: the session's cost so far, not 0.75.
		{"s1", Usage{Turns: 4, Cost: map[string]float64{"USD": 0.5, "EUR": 3}}},
		{"s2", Usage{Turns: 1, Cost: map[string]float64{"USD": 9}}},
		{"none", Usage{}},
	}
	for _, tc := range tests {
		t.Run(tc.session, func(t *testing.T) {
			got, err := s.UsageTotals(ctx, tc.session)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("UsageTotals (-want +got):\n%s", diff)
			}
		})
	}
}
