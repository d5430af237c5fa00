package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
)

// A worker killed mid-turn leaves its threads by the time its lease's TTL
// ran out, not an ack wait later: the event it held (its partition's one
// in flight) is given out again as soon as the lease expired, since the
// stream's ack wait is no longer than the TTL and a live worker says it
// is still at an event every third of it. Over the whole range of
// cluster.leaseTTL (1s to 10m) the slower of the two, plus the router's
// default retry, is within 5s of the TTL.
func TestAckWaitWithinTheLeaseTTL(t *testing.T) {
	const retry = 250 * time.Millisecond // RouterOptions.Retry's default
	for _, ttl := range []time.Duration{time.Second, 2 * time.Second, 6 * time.Second, cluster.DefaultLeaseTTL, 30 * time.Second, time.Minute, 10 * time.Minute} {
		wait := cluster.AckWait(ttl)
		if takeOver := max(wait, ttl) + retry; takeOver > ttl+5*time.Second {
			t.Errorf("lease TTL %v: ack wait %v, a take-over after %v, want within 5s of the TTL", ttl, wait, takeOver)
		}
		// A live worker's word every third of it: two may be late
		// (a loaded machine) before the event is given out again.
		if wait/3 < 500*time.Millisecond {
			t.Errorf("lease TTL %v: ack wait %v, a word every %v: too often to hold on a loaded machine", ttl, wait, wait/3)
		}
	}
}

// The consumers a router makes have the ack wait of its lease TTL.
func TestConsumersAckWaitOfTheTTL(t *testing.T) {
	n := startNode(t, t.TempDir())
	w := startWorker(t, n.ClientURL(), "w1", 6*time.Second, nil, 0, make(chan handled))
	<-w.router.Ready()
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	s, err := js.Stream(ctx, "test_inbound")
	if err != nil {
		t.Fatal(err)
	}
	for p := range cluster.Partitions {
		c, err := s.Consumer(ctx, fmt.Sprintf("%s-%d", cluster.Consumer, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CachedInfo().Config.AckWait; got != 6*time.Second {
			t.Errorf("consumer of partition %d: ack wait %v, want the lease TTL (6s)", p, got)
		}
	}
}

// A worker killed while it hands an event to its thread (its handler
// never returns; its connection is gone, as a SIGKILL leaves it) holds
// up its partition no longer than its lease: the live worker takes the
// event again once the lease expired, then the thread's next event, in
// order, and another thread's event of the same partition that waited
// behind them, each once.
func TestRouterKilledWorkerTakenOver(t *testing.T) {
	n := startNode(t, t.TempDir())
	const ttl = 2 * time.Second
	began := make(chan struct{}, 1)
	dead := startRouting(t, n.ClientURL(), "dead", routing{ttl: ttl,
		log: slog.New(slog.DiscardHandler), // it fails at all it does once killed
		handle: func(ctx context.Context, ev cluster.Event) error {
			began <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}})
	<-dead.router.Ready()
	_, js := connect(t, n.ClientURL())
	in := openInbound(t, js)
	ctx := ctxFor(t)
	th := thread(3)
	other := thread(4)
	for i := 5; cluster.PartitionOf(other) != cluster.PartitionOf(th); i++ {
		other = thread(i)
	}
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:1", Thread: th}); err != nil {
		t.Fatal(err)
	}
	<-began
	got := make(chan handled, 10)
	live := startWorker(t, n.ClientURL(), "live", ttl, nil, 0, got)
	<-live.router.Ready()
	for _, ev := range []cluster.Event{{ID: "web:2", Thread: th}, {ID: "web:3", Thread: other}} {
		if _, err := in.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	killed := time.Now()
	dead.conn.Close()
	var ids []string
	for range 3 {
		h := receive(t, got)
		if h.worker != "live" {
			t.Errorf("%s handled by %s", h.ev.ID, h.worker)
		}
		ids = append(ids, h.ev.ID)
	}
	t.Logf("taken over %v after the kill (lease TTL %v)", time.Since(killed).Round(time.Millisecond), ttl)
	if want := []string{"web:1", "web:2", "web:3"}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("handled %v, want %v", ids, want)
	}
	if l, held, err := live.leases.Holder(ctx, th); err != nil || !held || l.Owner != "live" {
		t.Errorf("thread held by %+v (%v, %v), want the live worker", l, held, err)
	}
	select {
	case h := <-got:
		t.Errorf("%s handled again", h.ev.ID)
	default:
	}
}
