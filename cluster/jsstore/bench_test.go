package jsstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/store"
)

// The hot paths of a worker on one loopback node: a binding looked up on
// every message, a turn record added after every turn, a prompt resolved,
// a frame of the event log written.

func benchThread(i int) channels.ThreadRef {
	return channels.ThreadRef{Platform: "slack", Channel: "T1/C1", Thread: fmt.Sprint("1700000000.", i)}
}

func BenchmarkBinding(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	for i := range 100 {
		if err := s.PutBinding(ctx, store.Binding{Thread: benchThread(i), Agent: "demo", SessionID: fmt.Sprint("s", i)}); err != nil {
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

func BenchmarkBindingParallel(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	for i := range 100 {
		if err := s.PutBinding(ctx, store.Binding{Thread: benchThread(i), Agent: "demo", SessionID: fmt.Sprint("s", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, ok, err := s.Binding(ctx, benchThread(i%100)); err != nil || !ok {
				b.Fatal(ok, err)
			}
			i++
		}
	})
}

// The session gives each turn its seq.
func BenchmarkAddTurn(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	now := time.Now()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		err := s.AddTurn(ctx, store.Turn{Thread: benchThread(i % 100), SessionID: fmt.Sprint("s", i%100), Seq: i/100 + 1,
			StopReason: "end_turn", Started: now, Ended: now, Used: 1000, UsedKnown: true, Cost: 0.01, Currency: "USD", CostKnown: true})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolvePrompt(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprint("p", i)
		b.StopTimer()
		if err := s.AddPrompt(ctx, store.Prompt{ID: id, Thread: benchThread(i), SessionID: "s"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if won, err := s.ResolvePrompt(ctx, id, store.PromptAnswered, "allow", "ann", time.Time{}); err != nil || !won {
			b.Fatal(won, err)
		}
	}
}

// A frame of ~300 bytes, acknowledged in batches (Flush at the end).
func BenchmarkEventWrite(b *testing.B) {
	js := jsFor(b, clustertest.StartNode(b).ClientURL())
	w := openEvents(b, js, 1<<30).Writer("s")
	f := []byte(frame("s", 0, 200))
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		if err := w.Write(f); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}
