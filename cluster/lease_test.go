package cluster_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go/jetstream"
)

func TestLeaseClaimRenewRelease(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	a := openLeases(t, js, "a", time.Minute, 1)
	b := openLeases(t, js, "b", time.Minute, 1)

	la, err := a.Claim(ctx, "slack/T1/C1/1700.1")
	if err != nil || la.Owner != "a" {
		t.Fatalf("a claims: %+v, %v", la, err)
	}
	again, err := a.Claim(ctx, "slack/T1/C1/1700.1")
	if err != nil || again.Owner != "a" || again.Revision <= la.Revision {
		t.Fatalf("a claims its own thread again: %+v, %v; want it renewed from %+v", again, err, la)
	}
	lb, err := b.Claim(ctx, "slack/T1/C1/1700.1")
	if !errors.Is(err, cluster.ErrHeld) || lb.Owner != "a" {
		t.Fatalf("b claims a's thread: %+v, %v; want ErrHeld naming a", lb, err)
	}
	renewed, err := a.Renew(ctx, la)
	if err != nil || renewed.Revision <= la.Revision {
		t.Fatalf("renew: %+v, %v", renewed, err)
	}
	// A renewal whose answer a lost (a timeout, a shutdown) left it with
	// a stale revision: the lease is still a's, so renewing and releasing
	// at the stale revision work (the release once left the lease held
	// until its TTL: TestClusterRoles under load).
	again, err = a.Renew(ctx, la)
	if err != nil || again.Revision <= renewed.Revision {
		t.Fatalf("renew at a stale revision of a's own lease: %+v, %v", again, err)
	}
	if err := a.Release(ctx, la); err != nil {
		t.Fatalf("release at a stale revision of a's own lease: %v", err)
	}
	if _, held, _ := a.Holder(ctx, "slack/T1/C1/1700.1"); held {
		t.Fatal("released thread still held")
	}
	lb, err = b.Claim(ctx, "slack/T1/C1/1700.1")
	if err != nil || lb.Owner != "b" {
		t.Fatalf("b claims the released thread: %+v, %v", lb, err)
	}
	// Once b holds it, a's old leases are lost and change nothing.
	if _, err := a.Renew(ctx, again); !errors.Is(err, cluster.ErrLost) {
		t.Fatalf("a renews b's lease: %v, want ErrLost", err)
	}
	if err := a.Release(ctx, again); !errors.Is(err, cluster.ErrLost) {
		t.Fatalf("a releases b's lease: %v, want ErrLost", err)
	}
	if h, held, _ := b.Holder(ctx, "slack/T1/C1/1700.1"); !held || h.Owner != "b" {
		t.Fatalf("a's stale lease changed b's: %+v %v", h, held)
	}
}

// Two workers race for the same threads; for each exactly one wins, and the
// loser is told who did.
func TestLeaseRaceOneWinner(t *testing.T) {
	n := startNode(t, t.TempDir())
	ctx := ctxFor(t)
	var workers []*cluster.Leases
	for _, id := range []string{"w1", "w2"} {
		_, js := connect(t, n.ClientURL()) // a connection each, as two processes
		workers = append(workers, openLeases(t, js, id, time.Minute, 1))
	}
	const rounds = 200
	for i := range rounds {
		var wg sync.WaitGroup
		got := make([]cluster.Lease, 2)
		errs := make([]error, 2)
		for w := range workers {
			wg.Go(func() { got[w], errs[w] = workers[w].Claim(ctx, thread(i)) })
		}
		wg.Wait()
		won := 0
		for w := range workers {
			switch {
			case errs[w] == nil:
				won++
				if got[w].Owner != workers[w].Owner() {
					t.Fatalf("round %d: %s won a lease naming %s", i, workers[w].Owner(), got[w].Owner)
				}
			case errors.Is(errs[w], cluster.ErrHeld):
				if got[w].Owner != workers[1-w].Owner() {
					t.Fatalf("round %d: loser told the holder is %q", i, got[w].Owner)
				}
			default:
				t.Fatalf("round %d: %v", i, errs[w])
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners", i, won)
		}
	}
}

// A worker that stops renewing loses the thread after the TTL, and another
// claims it; the old holder's renewal then fails.
func TestLeaseExpiryHandsOver(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	dead := openLeases(t, js, "dead", time.Second, 1)
	next := openLeases(t, js, "next", time.Second, 1)
	old, err := dead.Claim(ctx, thread(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := next.Claim(ctx, thread(1)); !errors.Is(err, cluster.ErrHeld) {
		t.Fatalf("claim before expiry: %v, want ErrHeld", err)
	}
	if err := next.WaitFree(ctx, thread(1)); err != nil {
		t.Fatal(err)
	}
	l, err := next.Claim(ctx, thread(1))
	if err != nil || l.Owner != "next" {
		t.Fatalf("claim after expiry: %+v, %v", l, err)
	}
	if _, err := dead.Renew(ctx, old); !errors.Is(err, cluster.ErrLost) {
		t.Fatalf("the dead worker renews: %v, want ErrLost", err)
	}
}

// A node restarted on its store directory keeps the bucket and its leases.
func TestLeaseSurvivesNodeRestart(t *testing.T) {
	dir := t.TempDir()
	n, err := natsnode.Start(natsnode.Options{StoreDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	nc, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	l, err := openLeases(t, js, "a", time.Hour, 1).Claim(ctx, thread(7))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	n.Shutdown()

	n2 := startNode(t, dir)
	_, js2 := connect(t, n2.ClientURL())
	b := openLeases(t, js2, "b", time.Hour, 1)
	h, held, err := b.Holder(ctx, thread(7))
	if err != nil || !held || h != l {
		t.Fatalf("after restart: %+v held=%v err=%v; want %+v", h, held, err, l)
	}
	if _, err := b.Claim(ctx, thread(7)); !errors.Is(err, cluster.ErrHeld) {
		t.Fatalf("claim after restart: %v, want ErrHeld", err)
	}
}

// A worker started again under the same id that claims a thread its run
// before held writes the lease again: left as it was, it lapsed at the
// TTL after that run's last renewal, perhaps before this run's first, and
// the thread was taken over from under it.
func TestLeaseClaimedAgainAfterARestartIsWritten(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	const thread = "slack/T1/C1/1700.2"
	before := openLeases(t, js, "w3", time.Second, 1)
	if _, err := before.Claim(ctx, thread); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "test_leases")
	if err != nil {
		t.Fatal(err)
	}
	watch, err := kv.Watch(ctx, cluster.LeaseKey(thread), jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	after := openLeases(t, js, "w3", time.Second, 1) // the run after, same id
	if _, err := after.Claim(ctx, thread); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e := <-watch.Updates():
			if e == nil {
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				t.Fatalf("the lease went (%v): the claim did not write it", e.Operation())
			}
			return
		case <-ctx.Done():
			t.Fatal("no word from the lease")
		}
	}
}
