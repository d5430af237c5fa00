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
