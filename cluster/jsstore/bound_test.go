package jsstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// syncBuffer is a log's output, safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An edge's lookup of the bindings: nothing is bound before any worker
// made the bucket; a binding is seen, an answer is kept for the TTL and
// read again after it; a bucket that cannot be read answers unbound and
// is logged once, naming the bucket.
func TestBoundThreads(t *testing.T) {
	n := clustertest.StartNode(t)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var logs syncBuffer
	b := jsstore.NewBoundThreads(js, jsstore.BoundOptions{
		Cluster: "c1", TTL: time.Second, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
	})
	th := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"}
	if b.Bound(ctx, th) {
		t.Fatal("bound before any worker made the bucket")
	}
	st := open(t, n.ClientURL(), "c1")
	if err := st.PutBinding(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if b.Bound(ctx, th) {
		t.Fatal("the answer of an instant ago was not kept")
	}
	advance(time.Second)
	if !b.Bound(ctx, th) {
		t.Fatal("a bound thread unbound after the TTL")
	}
	if err := st.DeleteBinding(ctx, th); err != nil {
		t.Fatal(err)
	}
	advance(time.Second)
	if b.Bound(ctx, th) {
		t.Fatal("a thread whose binding was deleted still bound after the TTL")
	}
	if logs.String() != "" {
		t.Errorf("logged while the bucket could be read:\n%s", logs.String())
	}

	nc.Close()
	other := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000200"}
	for range 2 {
		advance(time.Second)
		if b.Bound(ctx, other) {
			t.Fatal("bound without a connection")
		}
	}
	if got := logs.String(); strings.Count(got, "cannot read the cluster's bindings") != 1 || !strings.Contains(got, "bucket=c1_bindings") {
		t.Errorf("log after the connection closed:\n%s\nwant one warning naming c1_bindings", got)
	}
}

// A thread a worker holds the lease of counts as bound before its binding
// is written (the worker writes it once the agent's session exists), and
// no longer once the lease is released; a thread with neither is not.
func TestBoundThreadsLeased(t *testing.T) {
	n := clustertest.StartNode(t)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var logs syncBuffer
	b := jsstore.NewBoundThreads(js, jsstore.BoundOptions{
		Cluster: "c1", TTL: time.Second, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
	})
	open(t, n.ClientURL(), "c1") // the bindings bucket, empty
	leased := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"}
	other := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000200"}
	if b.Bound(ctx, leased) {
		t.Fatal("bound before any worker made the lease bucket")
	}
	leases, err := cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: "c1", Owner: "w1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	le, err := leases.Claim(ctx, leased.String())
	if err != nil {
		t.Fatal(err)
	}
	advance(time.Second)
	if !b.Bound(ctx, leased) {
		t.Error("a leased thread without a binding is not bound")
	}
	if b.Bound(ctx, other) {
		t.Error("a thread with neither a lease nor a binding is bound")
	}
	if err := leases.Release(ctx, le); err != nil {
		t.Fatal(err)
	}
	advance(time.Second)
	if b.Bound(ctx, leased) {
		t.Error("bound after its lease was released, with no binding")
	}
	if logs.String() != "" {
		t.Errorf("logged while the buckets could be read:\n%s", logs.String())
	}
}
