package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
)

// BenchmarkClaim measures claims of new threads per second on one node.
func BenchmarkClaim(b *testing.B) {
	n := startNode(b, b.TempDir())
	_, js := connect(b, n.ClientURL())
	l := openLeases(b, js, "w1", time.Minute, 1)
	ctx := ctxFor(b)
	i := 0
	for b.Loop() {
		if _, err := l.Claim(ctx, thread(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "claims/s")
}

// BenchmarkClaimParallel is claims per second from many goroutines (as many
// threads' first events at once).
func BenchmarkClaimParallel(b *testing.B) {
	n := startNode(b, b.TempDir())
	_, js := connect(b, n.ClientURL())
	l := openLeases(b, js, "w1", time.Minute, 1)
	ctx := ctxFor(b)
	b.SetParallelism(16)
	var next atomicInt
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Claim(ctx, thread(next.add())); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
}

// BenchmarkPublishDeliver measures the hop an inbound event takes: an edge
// publishes it, the stream stores it, the owning worker's handler gets it.
// Events go one at a time; p50 and p99 are reported.
func BenchmarkPublishDeliver(b *testing.B) {
	n := startNode(b, b.TempDir())
	nc, js := connect(b, n.ClientURL())
	got := make(chan struct{}, 1)
	leases := openLeases(b, js, "w1", time.Minute, 1)
	in, err := cluster.OpenInbound(ctxFor(b), js, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	r := cluster.NewRouter(cluster.RouterOptions{Cluster: "test", Conn: nc, Leases: leases, Inbound: in,
		Handle: func(context.Context, cluster.Event) error { got <- struct{}{}; return nil }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	_, pjs := connect(b, n.ClientURL()) // the edge's own connection
	edge, err := cluster.OpenInbound(ctxFor(b), pjs, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := edge.Publish(ctx, cluster.Event{ID: fmt.Sprint("e", i), Thread: thread(i % 10)}); err != nil {
			b.Fatal(err)
		}
		<-got
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkClaimCluster is claims per second on a 3-node cluster with
// three replicas of the bucket (each claim is a replicated write).
func BenchmarkClaimCluster(b *testing.B) {
	nodes := startCluster(b)
	_, js := connect(b, nodes[1].ClientURL())
	ctx := ctxFor(b)
	var l *cluster.Leases
	if err := retry(ctx, func(ctx context.Context) (err error) {
		l, err = cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: "test", Owner: "w1", TTL: time.Minute, Replicas: 3})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(16)
	var next atomicInt
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Claim(ctx, thread(next.add())); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
}
