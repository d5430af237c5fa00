//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package flock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Wait takes the lock once its holder lets it go, and holds it then.
func TestWaitTakesTheLockWhenFree(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")
	first, second := open(t, name), open(t, name)
	if err := Try(first); err != nil {
		t.Fatal(err)
	}
	if err := Try(second); !errors.Is(err, ErrLocked) {
		t.Fatalf("Try while another holds the lock: %v, want ErrLocked", err)
	}
	done := make(chan error, 1)
	go func() { done <- Wait(second) }()
	first.Close()
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if err := Try(open(t, name)); !errors.Is(err, ErrLocked) {
		t.Errorf("Try after Wait took the lock: %v, want ErrLocked", err)
	}
}
