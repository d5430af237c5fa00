package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// A draining worker gives back at once an event of its partition it was
// handed but had not begun: another worker takes it well before the
// stream's ack wait (30 s) would have given it back.
func TestRouterDrainGivesBackEventsNotBegun(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 10)
	begun := make(chan struct{})
	release := make(chan struct{})
	const ttl = 600 * time.Millisecond
	var w1 *worker
	w1 = startRouting(t, n.ClientURL(), "w1", routing{ttl: ttl, handle: func(_ context.Context, ev cluster.Event) error {
		got <- handled{"w1", ev}
		if ev.ID == "web:1" {
			close(begun)
			<-release
			// The drain begins as the event is done: the partition's
			// next is handed to this worker as it stops taking them.
			w1.router.StopClaiming()
		}
		return nil
	}})
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	in := openInbound(t, js)
	// Two threads of one partition: the second's event waits behind the
	// first's (one event of a partition at a time).
	a, b := thread(1), ""
	for i := 2; b == ""; i++ {
		if cluster.PartitionOf(thread(i)) == cluster.PartitionOf(a) {
			b = thread(i)
		}
	}
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:1", Thread: a}); err != nil {
		t.Fatal(err)
	}
	<-begun
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:2", Thread: b}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); h.worker != "w1" || h.ev.ID != "web:1" {
		t.Fatalf("got %s from %s, want web:1 taken by w1", h.ev.ID, h.worker)
	}
	startWorker(t, n.ClientURL(), "w2", ttl, nil, 0, got)
	close(release)
	select {
	case h := <-got:
		if h.worker != "w2" || h.ev.ID != "web:2" {
			t.Fatalf("got %s from %s, want web:2 taken by w2", h.ev.ID, h.worker)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event the draining worker was handed did not reach w2 within 10s (left to the ack wait)")
	}
}

// A draining worker takes no event of a thread it does not hold, even one
// forwarded to it because the thread's lease bears its name: an earlier
// run of it (killed, started again with the same id) left that lease. Its
// forwarding subjects stay subscribed while a turn it began holds up its
// drain; the event goes to a worker that is not draining once the lease
// expired (the cluster harness saw the draining worker take such an event
// while the forwarder, its request timed out, gave it back to the stream:
// the thread was answered twice).
func TestRouterDrainingTakesNoThreadLeftInItsName(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	const ttl = 600 * time.Millisecond
	a := thread(1)
	x := otherPartition(a)
	// The lease the killed run of w1 left.
	if _, err := openLeases(t, js, "w1", ttl, 1).Claim(ctx, x); err != nil {
		t.Fatal(err)
	}
	got := make(chan handled, 10)
	begun := make(chan struct{})
	release := make(chan struct{})
	w1 := startRouting(t, n.ClientURL(), "w1", routing{ttl: ttl, handle: func(_ context.Context, ev cluster.Event) error {
		got <- handled{"w1", ev}
		if ev.ID == "web:1" {
			close(begun)
			<-release
		}
		return nil
	}})
	in := openInbound(t, js)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:1", Thread: a}); err != nil {
		t.Fatal(err)
	}
	<-begun
	if h := receive(t, got); h.worker != "w1" || h.ev.ID != "web:1" {
		t.Fatalf("got %s from %s, want web:1 taken by w1", h.ev.ID, h.worker)
	}
	defer close(release)
	w1.router.StopClaiming()
	startWorker(t, n.ClientURL(), "w2", ttl, nil, 0, got)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:5", Thread: x}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); h.worker != "w2" || h.ev.ID != "web:5" {
		t.Fatalf("%s took %s, want web:5 taken by w2 (w1 drains; the lease in its name is its earlier run's)", h.worker, h.ev.ID)
	}
}

// An owner that takes longer to take a forwarded event than a forwarder
// waits for an answer (a thread taken over: the store read, the messages
// the worker before left open edited) says it is still at it: the
// forwarder waits, and the event is taken once. A forwarder that gave up
// gave the event back to the stream, and the owner took it again.
func TestRouterSlowOwnerTakesForwardedEventOnce(t *testing.T) {
	const silence = 200 * time.Millisecond
	cluster.SetForwardTimes(t, silence, silence/4)
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	const ttl = 10 * time.Second // beyond the test: w1's renewals wait for its drain
	x := thread(1)
	a := otherPartition(x)
	got := make(chan handled, 10)
	begun := make(chan struct{})
	release := make(chan struct{})
	w1 := startRouting(t, n.ClientURL(), "w1", routing{ttl: ttl, handle: func(_ context.Context, ev cluster.Event) error {
		got <- handled{"w1", ev}
		switch ev.ID {
		case "web:1":
			// Holds up w1's drain: its forwarding subjects stay.
			close(begun)
			<-release
		case "web:2":
			<-time.After(5 * silence) // slower than a forwarder waits
		}
		return nil
	}})
	in := openInbound(t, js)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:0", Thread: x}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); h.ev.ID != "web:0" {
		t.Fatalf("got %s, want web:0", h.ev.ID)
	}
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:1", Thread: a}); err != nil {
		t.Fatal(err)
	}
	<-begun
	receive(t, got)
	defer close(release)
	// Draining, w1 gives the stream's events back: w2 takes web:2 from
	// the stream and forwards it to w1, which holds its thread.
	w1.router.StopClaiming()
	startWorker(t, n.ClientURL(), "w2", ttl, nil, 0, got)
	for _, id := range []string{"web:2", "web:3"} {
		if _, err := in.Publish(ctx, cluster.Event{ID: id, Thread: x}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"web:2", "web:3"} {
		if h := receive(t, got); h.worker != "w1" || h.ev.ID != want {
			t.Fatalf("%s took %s, want w1 to take %s (once)", h.worker, h.ev.ID, want)
		}
	}
}

// A worker that begins its drain while it is still handing an event over
// (adopting a thread, say) keeps renewing its leases meanwhile: stopping
// the deliveries waits for that event, and the renewals waited with it
// until every lease had expired.
func TestDrainRenewsWhileAnEventIsHandedOver(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	const ttl = 600 * time.Millisecond
	x := thread(1)
	slow := otherPartition(x)
	got := make(chan handled, 10)
	begun, release := make(chan struct{}), make(chan struct{})
	w1 := startRouting(t, n.ClientURL(), "w1", routing{ttl: ttl, handle: func(hctx context.Context, ev cluster.Event) error {
		if ev.ID == "web:slow" {
			close(begun)
			select {
			case <-release:
			case <-hctx.Done():
			}
		}
		got <- handled{"w1", ev}
		return nil
	}})
	in := openInbound(t, js)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:0", Thread: x}); err != nil {
		t.Fatal(err)
	}
	receive(t, got)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:slow", Thread: slow}); err != nil {
		t.Fatal(err)
	}
	<-begun
	kv, err := js.KeyValue(ctx, "test_leases")
	if err != nil {
		t.Fatal(err)
	}
	watch, err := kv.Watch(ctx, cluster.LeaseKey(x), jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	w1.router.StopClaiming()
	for renewals := 0; renewals < 4; {
		select {
		case e := <-watch.Updates():
			if e == nil {
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				t.Fatalf("the lease of %s went (%v) while w1 drained", x, e.Operation())
			}
			renewals++
		case <-ctx.Done():
			t.Fatal("w1 stopped renewing while it handed an event over")
		}
	}
	close(release)
	receive(t, got)
}
