package clustertest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpgw/gateway/internal/flock"
)

// TakeTurn waits until no other cluster case runs on this machine, in
// this test binary or another (go test ./... runs the packages' binaries
// side by side), and holds the turn until t ends. A cluster case is two
// edges, three workers, their agents and a NATS cluster: two of them at
// once on two cores starve the workers' leases under -race, and a lease
// lost mid-turn changes what the case sees. Where the machine has no
// flock, the cases run side by side.
func TakeTurn(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "acpgw-cluster-case.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("the cluster cases' lock: %v", err)
	}
	began := time.Now()
	if err := flock.Wait(f); err != nil {
		t.Logf("the cluster cases' lock: %v; running beside the others", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Logf("waited %v for another cluster case to end", d.Round(time.Millisecond))
	}
	t.Cleanup(func() { f.Close() })
}
