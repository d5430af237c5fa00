package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// The same hot paths as cluster/jsstore's benchmarks, on SQLite, to
// compare.

func benchThread(i int) channels.ThreadRef {
	return channels.ThreadRef{Platform: "slack", Channel: "T1/C1", Thread: fmt.Sprint("1700000000.", i)}
}

func BenchmarkBinding(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	for i := range 100 {
		if err := s.PutBinding(ctx, Binding{Thread: benchThread(i), Agent: "demo", SessionID: fmt.Sprint("s", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok, err := s.Binding(ctx, benchThread(i%100)); err != nil || !ok {
			b.Fatal(ok, err)
		}
		i++
	}
}

func BenchmarkAddTurn(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	now := time.Now()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		err := s.AddTurn(ctx, Turn{Thread: benchThread(i % 100), SessionID: fmt.Sprint("s", i%100), Seq: i/100 + 1,
			StopReason: "end_turn", Started: now, Ended: now, Used: 1000, UsedKnown: true, Cost: 0.01, Currency: "USD", CostKnown: true})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarkPrompt is a prompt's mark on the hot path: written when
// the thread accepts it, cleared once its answer was delivered.
func BenchmarkMarkPrompt(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	p := TurnPrompt{ID: "m1", Author: channels.Author{ID: "u1", Name: "Ada"}, Text: "fix the build, please", Time: time.Now()}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		th, at := benchThread(i%100), time.UnixMilli(int64(i))
		if err := s.MarkTurnRunning(ctx, RunningTurn{Thread: th, Started: at, Prompt: p}); err != nil {
			b.Fatal(err)
		}
		if err := s.ClearTurnRunning(ctx, th, at); err != nil {
			b.Fatal(err)
		}
	}
}
