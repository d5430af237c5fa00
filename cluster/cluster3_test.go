package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// startCluster starts three nodes routed on loopback (the harness's);
// they stop with the test.
func startCluster(t testing.TB) []*natsnode.Node { return clustertest.StartNATS(t) }

// retry calls f, each try with 2s, until it succeeds or ctx ends (a new
// cluster elects its JetStream leader first).
func retry(ctx context.Context, f func(context.Context) error) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := f(tctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// On a 3-node cluster with a bucket of three replicas, workers connected
// to different nodes race for the same threads: exactly one wins each, and
// the inbound stream drops a duplicate.
func TestClusterOfThree(t *testing.T) {
	nodes := startCluster(t)
	ctx := ctxFor(t)
	var workers []*cluster.Leases
	for i, n := range nodes {
		_, js := connect(t, n.ClientURL())
		var l *cluster.Leases
		err := retry(ctx, func(ctx context.Context) (err error) {
			l, err = cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: "test", Owner: fmt.Sprintf("w%d", i), TTL: time.Minute, Replicas: 3})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		workers = append(workers, l)
	}
	for round := range 50 {
		var wg sync.WaitGroup
		errs := make([]error, len(workers))
		for w := range workers {
			wg.Go(func() { _, errs[w] = workers[w].Claim(ctx, thread(round)) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, cluster.ErrHeld):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners", round, won)
		}
	}

	_, js := connect(t, nodes[2].ClientURL())
	var in *cluster.Inbound
	if err := retry(ctx, func(ctx context.Context) (err error) {
		in, err = cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Minute, Replicas: 3})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true} {
		dup, err := in.Publish(ctx, cluster.Event{ID: "slack:Ev9", Thread: thread(1)})
		if err != nil || dup != want {
			t.Fatalf("publish %d: duplicate=%v err=%v, want %v", i, dup, err, want)
		}
	}
}
