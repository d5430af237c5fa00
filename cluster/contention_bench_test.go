package cluster_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
)

// BenchmarkClaimContended is three workers (each its own connection and
// lease owner) claiming every new thread at once, as when each takes an
// event of the same thread: one wins, two get ErrHeld and the winner.
// threads/s is threads placed per second, claims/s the calls answered.
func BenchmarkClaimContended(b *testing.B) {
	n := startNode(b, b.TempDir())
	const workers = 3
	leases := make([]*cluster.Leases, workers)
	for i := range leases {
		_, js := connect(b, n.ClientURL())
		leases[i] = openLeases(b, js, fmt.Sprint("w", i+1), time.Minute, 1)
	}
	ctx := ctxFor(b)
	var claims, held atomic.Int64
	i := 0
	for b.Loop() {
		th := thread(i)
		winners := make([]string, workers)
		var wg sync.WaitGroup
		for w, l := range leases {
			wg.Go(func() {
				got, err := l.Claim(ctx, th)
				switch {
				case errors.Is(err, cluster.ErrHeld):
					held.Add(1)
				case err != nil:
					b.Error(err)
				}
				winners[w] = got.Owner
				claims.Add(1)
			})
		}
		wg.Wait()
		for _, w := range winners[1:] {
			if w != winners[0] {
				b.Fatalf("%s: the workers disagree on its holder: %q", th, winners)
			}
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "threads/s")
	b.ReportMetric(float64(claims.Load())/b.Elapsed().Seconds(), "claims/s")
	if held.Load() != int64(i*(workers-1)) {
		b.Errorf("%d claims lost to another worker, want %d (all but one per thread)", held.Load(), i*(workers-1))
	}
}
