package jsstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/store"
)

// The store at 10,000 threads in one channel (issue 30 point 12): what a
// call costs when the buckets and streams hold that many.

const scaleThreads = 10_000

func scaleThread(i int) channels.ThreadRef {
	return channels.ThreadRef{Platform: "slack", Channel: "T1/C1", Thread: fmt.Sprint("1700000000.", i)}
}

// scaleEntries is a turn's save: the prompt, a tool call, the answer.
func scaleEntries(seq int, at time.Time) []store.Entry {
	return []store.Entry{
		{Seq: seq, Time: at, Updated: at, Body: store.Message{Role: store.RoleUser, Text: "run the tests please"}},
		{Seq: seq + 1, Time: at, Updated: at, Body: store.ToolCall{ID: "c1", Title: "go test ./...", Kind: "execute"}},
		{Seq: seq + 2, Time: at, Updated: at, Body: store.Message{Role: store.RoleAssistant, Text: "All tests pass."}},
	}
}

// BenchmarkSaveEntries10k saves a turn's entries into one of 10,000
// sessions whose transcripts the stream holds.
func BenchmarkSaveEntries10k(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	at := time.Now()
	for i := range scaleThreads {
		if err := s.SaveEntries(ctx, fmt.Sprint("s", i), scaleEntries(0, at)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.SaveEntries(ctx, fmt.Sprint("s", i%scaleThreads), scaleEntries(3+3*(i/scaleThreads), at)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkChannelSpend10k sums the spend of a channel of 10,000
// threads since the day began, a turn each, as the budget check before
// every prompt does: "read" when no turn was recorded since the last
// sum, "after a turn" when one was (recorded with the timer stopped).
func BenchmarkChannelSpend10k(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	at := time.Now()
	y, m, d := at.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	turn := func(i, seq int) store.Turn {
		return store.Turn{Thread: scaleThread(i), SessionID: fmt.Sprint("s", i), Seq: seq, StopReason: "end_turn",
			Started: at, Ended: at, Cost: 0.01 * float64(seq), Currency: "USD", CostKnown: true}
	}
	for i := range scaleThreads {
		if err := s.AddTurn(ctx, turn(i, 1)); err != nil {
			b.Fatal(err)
		}
	}
	n := scaleThreads
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sp, err := s.ChannelSpend(ctx, "slack", "T1/C1", day)
			if err != nil || sp.Turns != n {
				b.Fatal(sp, err)
			}
		}
	})
	b.Run("after a turn", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			if err := s.AddTurn(ctx, turn(n%scaleThreads, 2+n/scaleThreads)); err != nil {
				b.Fatal(err)
			}
			n++
			b.StartTimer()
			sp, err := s.ChannelSpend(ctx, "slack", "T1/C1", day)
			if err != nil || sp.Turns != n {
				b.Fatal(sp, err)
			}
		}
	})
}

// BenchmarkChannelBindings10k lists the bindings of a channel deleted
// (session's Router.known) among 10,000 threads in 100 channels: "all"
// reads every binding and keeps the channel's, as it was done before,
// "channel" has the server send the channel's alone.
func BenchmarkChannelBindings10k(b *testing.B) {
	s := open(b, clustertest.StartNode(b).ClientURL(), "bench")
	ctx := b.Context()
	th := func(i int) channels.ThreadRef {
		return channels.ThreadRef{Platform: "discord", Channel: fmt.Sprint("g1/c", i%100), Thread: fmt.Sprint(i)}
	}
	for i := range scaleThreads {
		if err := s.PutBinding(ctx, store.Binding{Thread: th(i), Agent: "demo", SessionID: fmt.Sprint("s", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bs, err := s.Bindings(ctx)
			n := 0
			for _, x := range bs {
				if x.Thread.Platform == "discord" && x.Thread.Channel == "g1/c7" {
					n++
				}
			}
			if err != nil || n != scaleThreads/100 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("channel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bs, err := s.ChannelBindings(ctx, "discord", "g1/c7")
			if err != nil || len(bs) != scaleThreads/100 {
				b.Fatal(len(bs), err)
			}
		}
	})
}
