package edge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
)

// BenchmarkInboundStored is a burst of BENCH_EVENTS (default 1,000)
// inbound events handed to an edge by its adapter, from the first handed
// over to the last stored on the inbound stream (an embedded node on
// loopback): an op is one burst. "sync" publishes one event at a time,
// each once the one before is stored (Window 1: the edge before its
// asynchronous publisher); "threads-N" spreads the burst over N threads
// with the default window, one thread's events one after another and the
// threads' together. Each iteration takes new event ids (the duplicate
// window would drop a repeat).
//
//	go test ./cluster/edge -run '^$' -bench BenchmarkInboundStored -benchtime 10x
func BenchmarkInboundStored(b *testing.B) {
	events := envInt(b, "BENCH_EVENTS", 1000)
	b.Run("sync", func(b *testing.B) { benchStored(b, events, events, 1) })
	for _, threads := range []int{events, 100, 10} {
		b.Run(fmt.Sprintf("threads-%d", threads), func(b *testing.B) { benchStored(b, events, threads, 0) })
	}
}

func benchStored(b *testing.B, events, threads, window int) {
	url := benchNode(b)
	rec := channeltest.New(channeltest.Options{})
	e := benchEdge(b, url, rec.Adapter(), func(o *edge.Options) { o.Window = window })
	stored := make(chan struct{}, events)
	e.OnStored(func(cluster.Event) { stored <- struct{}{} })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	round := 0
	for b.Loop() {
		for i := range events {
			in := channels.Inbound{
				Thread: rec.Thread(fmt.Sprint("t", i%threads)), Author: ann,
				Text: "hello", ID: channels.MessageID(fmt.Sprintf("r%d-m%d", round, i)),
			}
			if err := rec.Deliver(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
		for range events {
			if !wait(b, stored, "an event stored") {
				return
			}
		}
		round++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/burst")
}
