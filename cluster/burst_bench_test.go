package cluster_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/internal/testlog"
)

// BenchmarkInboundBurst is BENCH_EVENTS (default 1,000) first events of as
// many new threads, published at once (by 32 publishers), to three workers
// (each its own connection, leases and registry, a lease TTL of 10s) whose
// handlers take an event at once ("instant"), or after 1ms ("1ms": a
// hand-over that waits, as the session's queue or a forward on a busy
// machine does; the next event of its partition waits for it). handed- is
// from an event's publish to its owner's handler (p50, p99), last-ms from
// the burst's start to the last event handled, threads-min/max the
// threads the workers hold after it (placement's spread). Each iteration
// takes new threads; run it with -benchtime 1x.
func BenchmarkInboundBurst(b *testing.B) {
	b.Run("instant", func(b *testing.B) { benchBurst(b, 0) })
	b.Run("1ms", func(b *testing.B) { benchBurst(b, time.Millisecond) })
}

func benchBurst(b *testing.B, handOver time.Duration) {
	events := 1000
	if s := os.Getenv("BENCH_EVENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("BENCH_EVENTS=%q: want a positive number", s)
		}
		events = n
	}
	const workers, publishers = 3, 32
	n := startNode(b, b.TempDir())
	var mu sync.Mutex
	handledAt := map[string]time.Time{}
	got := make(chan struct{}, events)
	var routers []*cluster.Router
	var regs []*cluster.Registry
	for i := range workers {
		nc, js := connect(b, n.ClientURL())
		ctx := ctxFor(b)
		reg, err := cluster.OpenRegistry(ctx, js, cluster.RegistryOptions{Cluster: "test", TTL: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(reg.Close)
		regs = append(regs, reg)
		r := cluster.NewRouter(cluster.RouterOptions{
			Cluster: "test", Conn: nc, Leases: openLeases(b, js, fmt.Sprint("w", i+1), 10*time.Second, 1),
			Registry: reg, Inbound: openInbound(b, js), Agents: []string{"demo"},
			Retry: 20 * time.Millisecond, Log: testlog.FailOnError(b),
			Handle: func(_ context.Context, ev cluster.Event) error {
				mu.Lock()
				handledAt[ev.Thread] = time.Now()
				mu.Unlock()
				if handOver > 0 {
					<-time.After(handOver)
				}
				got <- struct{}{}
				return nil
			},
		})
		routers = append(routers, r)
		rctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		b.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				b.Error(err)
			}
		})
	}
	ctx := ctxFor(b)
	for _, reg := range regs {
		if err := reg.Await(ctx, func(ws []cluster.WorkerInfo) bool { return len(ws) == workers }); err != nil {
			b.Fatal(err)
		}
	}
	_, js := connect(b, n.ClientURL())
	in := openInbound(b, js)
	var lat []time.Duration
	var last time.Duration
	round := 0
	for b.Loop() {
		starts := make([]time.Time, events)
		begin := time.Now()
		var wg sync.WaitGroup
		for p := range publishers {
			wg.Go(func() {
				for i := p; i < events; i += publishers {
					starts[i] = time.Now()
					ev := cluster.Event{ID: fmt.Sprintf("web:r%d-%d", round, i), Thread: fmt.Sprintf("web/r%d/%d", round, i), Agent: "demo"}
					if _, err := in.Publish(ctx, ev); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		for range events {
			select {
			case <-got:
			case <-ctx.Done():
				b.Fatal("the burst was not handled within a minute")
			}
		}
		mu.Lock()
		end := begin
		for i, s := range starts {
			at := handledAt[fmt.Sprintf("web/r%d/%d", round, i)]
			lat = append(lat, at.Sub(s))
			if at.After(end) {
				end = at
			}
		}
		mu.Unlock()
		last = max(last, end.Sub(begin))
		round++
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "handed-p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "handed-p99-ms")
	b.ReportMetric(ms(last), "last-ms")
	var held []int
	for _, r := range routers {
		held = append(held, len(r.Owned()))
	}
	b.ReportMetric(float64(slices.Min(held)), "threads-min/worker")
	b.ReportMetric(float64(slices.Max(held)), "threads-max/worker")
}
