package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
)

// A burst of new threads spreads over equal workers even when their loads
// are announced in the middle of it: the workers announce after its first
// tenth (their loads then a little apart: 12, 11 and 7 by the hash of
// these thread names alone), and the rest of the burst does not all go to
// the one that looked least loaded (277 of 300 did).
func TestPlacementBurstSpreads(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 300)
	var ws []*worker
	for i := range 3 {
		id := fmt.Sprint("w", i+1)
		// An hour's TTL: no announcement but the test's.
		ws = append(ws, startRouting(t, n.ClientURL(), id, routing{ttl: time.Hour, agents: []string{"demo"},
			handle: func(_ context.Context, ev cluster.Event) error {
				got <- handled{id, ev}
				return nil
			}}))
	}
	ctx := ctxFor(t)
	announced := func(threads int) {
		t.Helper()
		for _, w := range ws {
			err := w.reg.Await(ctx, func(all []cluster.WorkerInfo) bool {
				sum := 0
				for _, wi := range all {
					sum += wi.Load
				}
				return len(all) == 3 && sum == threads
			})
			if err != nil {
				t.Fatalf("%s's view: %v", w.id, w.reg.Workers())
			}
		}
	}
	announced(0)
	_, js := connect(t, n.ClientURL())
	in := openInbound(t, js)
	burst := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if _, err := in.Publish(ctx, cluster.Event{ID: fmt.Sprint("web:", i), Thread: thread(i), Agent: "demo"}); err != nil {
				t.Fatal(err)
			}
		}
		for range to - from {
			receive(t, got)
		}
	}
	burst(0, 30)
	for _, w := range ws {
		if err := w.router.Announce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	announced(30)
	t.Logf("announced after 30 threads: %v", ws[0].reg.Workers())
	burst(30, 300)
	total := 0
	for _, w := range ws {
		held := len(w.router.Owned())
		t.Logf("%s holds %d threads", w.id, held)
		total += held
		if held < 70 || held > 130 {
			t.Errorf("%s holds %d of 300 threads, want 70 to 130", w.id, held)
		}
	}
	if total != 300 {
		t.Errorf("the workers hold %d threads, want 300", total)
	}
}
