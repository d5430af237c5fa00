package channeltest

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goroutineSnapshot maps the id of every live goroutine to its stack.
type goroutineSnapshot map[string]string

// goroutines returns the stacks of all goroutines, by id.
func goroutines() goroutineSnapshot {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	snap := make(goroutineSnapshot)
	for block := range bytes.SplitSeq(buf, []byte("\n\n")) {
		s := string(bytes.TrimSpace(block))
		// "goroutine 17 [chan receive]:"
		head, _, _ := strings.Cut(s, "\n")
		id, ok := strings.CutPrefix(head, "goroutine ")
		if !ok {
			continue
		}
		id, _, _ = strings.Cut(id, " ")
		snap[id] = s
	}
	return snap
}

// ignoredStacks are goroutines that outlive a clean shutdown by design:
// idle keep-alive connections of net/http clients and servers, which close
// on their own timers.
var ignoredStacks = []string{
	"net/http.(*persistConn).readLoop",
	"net/http.(*persistConn).writeLoop",
	"net/http.(*conn).serve",
}

// newSince returns the stacks of goroutines that run now and did not run at
// before, leaving out ignoredStacks.
func newSince(before goroutineSnapshot) []string {
	var out []string
	for id, stack := range goroutines() {
		if _, ok := before[id]; ok {
			continue
		}
		if containsAny(stack, ignoredStacks) {
			continue
		}
		out = append(out, stack)
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// checkNoNewGoroutines waits until every goroutine started since before has
// ended, polling until ctx ends, and reports the stacks of those left.
// Goroutine state is process-wide, so tests running in parallel can make
// this check fail.
func checkNoNewGoroutines(ctx context.Context, t *testing.T, before goroutineSnapshot) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		left := newSince(before)
		if len(left) == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Errorf("%d goroutine(s) still running after Run returned:\n\n%s", len(left), strings.Join(left, "\n\n"))
			return
		}
	}
}

// LeakCheck snapshots the running goroutines and returns a function that
// fails t if goroutines started since then are still running when it is
// called (it waits up to ten seconds for them to end). Use it around a
// component's whole life: start, run, cancel, wait.
func LeakCheck(t *testing.T) func() {
	before := goroutines()
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		checkNoNewGoroutines(ctx, t, before)
	}
}
