// Package sandboxtest is for tests only: it says whether the tests that
// run agents in real sandboxes can run here.
package sandboxtest

import (
	"os"
	"testing"

	"github.com/acpgw/gateway/sandbox"
)

// Require skips t, saying why, when no sandbox can be had on this machine
// (bubblewrap missing or not working) and CI is unset; with CI set, it
// fails t instead: CI installs bubblewrap.
func Require(t testing.TB) {
	t.Helper()
	if _, err := sandbox.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %v", err)
		}
		t.Skipf("no sandbox on this machine: %v", err)
	}
}
