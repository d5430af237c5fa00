package lanes

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// TestOrderPerKey: one key's functions run one after the other in the
// order they were queued.
func TestOrderPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		var mu sync.Mutex
		var got []int
		for i := range 100 {
			if !g.Do("k", func() {
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
			}) {
				t.Fatalf("Do %d refused", i)
			}
		}
		g.Close()
		want := make([]int, 100)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(got, want) {
			t.Errorf("order = %v, want %v", got, want)
		}
	})
}

// TestKeysWaitForNoOther: a key whose function blocks holds up neither
// another key nor the caller of Do, and its own later work waits for it.
func TestKeysWaitForNoOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		release := make(chan struct{})
		var slowDone, afterSlow, other bool
		g.Do("slow", func() { <-release; slowDone = true })
		g.Do("slow", func() { afterSlow = slowDone })
		g.Do("other", func() { other = true })
		synctest.Wait()
		if !other {
			t.Error("the other key did not run while the slow key was blocked")
		}
		close(release)
		g.Close()
		if !afterSlow {
			t.Error("the slow key's second function ran before its first ended")
		}
	})
}

// TestIdleKeysEnd: once a key's queue is empty its goroutine ends and the
// key is forgotten; new work for it starts a new goroutine.
func TestIdleKeysEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		ran := 0
		for i := range 1000 {
			g.Do(fmt.Sprint("key", i), func() {})
		}
		synctest.Wait() // every goroutine of the bubble ended or is blocked
		g.mu.Lock()
		left := len(g.queues)
		g.mu.Unlock()
		if left != 0 {
			t.Errorf("%d keys still held after their work ran", left)
		}
		g.Do("key1", func() { ran++ })
		synctest.Wait()
		if ran != 1 {
			t.Errorf("work for a key that went idle ran %d times, want 1", ran)
		}
		g.Close()
	})
}

// TestBacklogAndClose: Do refuses work beyond MaxQueued waiting for one
// key, and any work after Close; Close waits for what was queued.
func TestBacklogAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New()
		release := make(chan struct{})
		g.Do("k", func() { <-release }) // taken off the queue and blocked
		synctest.Wait()
		ran := 0
		for i := range MaxQueued {
			if !g.Do("k", func() { ran++ }) {
				t.Fatalf("Do %d refused below the limit", i)
			}
		}
		if g.Do("k", func() { ran++ }) {
			t.Error("Do accepted work beyond MaxQueued")
		}
		if !g.Do("other", func() {}) {
			t.Error("a full key refused work for another key")
		}
		closed := make(chan struct{})
		go func() { g.Close(); close(closed) }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while work was still queued")
		default:
		}
		if g.Do("k2", func() {}) {
			t.Error("Do accepted work after Close")
		}
		close(release)
		<-closed
		if ran != MaxQueued {
			t.Errorf("ran %d queued functions before Close returned, want %d", ran, MaxQueued)
		}
	})
}
