package mailbox

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is an owner that notes what Run did, at which virtual time.
type recorder struct {
	mu    sync.Mutex
	start time.Time
	log   []string
	wake  time.Time // what Step returns
	stop  int       // Done once this many items were handled (0: never)
	items int
}

func (r *recorder) note(s string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf("%s@%v", s, now.Sub(r.start)))
}

func (r *recorder) Handle(now time.Time, v string) {
	r.note(v, now)
	r.mu.Lock()
	r.items++
	r.mu.Unlock()
}

func (r *recorder) Step(now time.Time) time.Time {
	r.mu.Lock()
	w := r.wake
	due := !w.IsZero() && !now.Before(w)
	if due {
		r.wake = time.Time{}
	}
	r.mu.Unlock()
	if due {
		r.note("tick", now)
	}
	return w
}

func (r *recorder) Done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop > 0 && r.items >= r.stop
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// Items come in order, one Step after they are taken; the time a Step
// asked for wakes the owner without an item; Close ends Run.
func TestRunHandsOverInOrderAndStepsAtTheTimeAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{start: time.Now()}
		r.wake = r.start.Add(2 * time.Second)
		b := New[string]()
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(t.Context(), b, r)
		}()
		b.Put("a")
		b.Put("b")
		synctest.Wait()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		b.Put("c")
		synctest.Wait()
		if left := b.Close(); len(left) != 0 {
			t.Errorf("Close returned %v, want nothing left", left)
		}
		<-done
		want := []string{"a@0s", "b@0s", "tick@2s", "c@3s"}
		if got := r.got(); !slices.Equal(got, want) {
			t.Errorf("Run did %v, want %v", got, want)
		}
		if b.Put("d") {
			t.Error("Put into a closed box reported true")
		}
	})
}

// An owner that is Done stops taking items: those left stay for Close,
// which returns them in order for their senders to be answered.
func TestItemsLeftWhenTheOwnerIsDoneAreReturnedByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{start: time.Now(), stop: 1}
		b := New[string]()
		b.Put("first")
		b.Put("second")
		b.Put("third")
		Run(t.Context(), b, r)
		if got, want := r.got(), []string{"first@0s"}; !slices.Equal(got, want) {
			t.Errorf("Run did %v, want %v", got, want)
		}
		if left, want := b.Close(), []string{"second", "third"}; !slices.Equal(left, want) {
			t.Errorf("Close returned %v, want %v", left, want)
		}
	})
}

// CloseIfEmpty closes only an empty box; Run returns when its context
// ends even with a timer asked for.
func TestCloseIfEmptyAndContext(t *testing.T) {
	b := New[int]()
	b.Put(1)
	if b.CloseIfEmpty() {
		t.Fatal("CloseIfEmpty closed a box with an item in it")
	}
	if !b.Put(2) {
		t.Fatal("the box refused an item after a CloseIfEmpty that did not close it")
	}
	e := New[int]()
	if !e.CloseIfEmpty() || e.Put(1) {
		t.Fatal("an empty box was not closed by CloseIfEmpty")
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		r := &recorder{start: time.Now(), wake: time.Now().Add(time.Hour)}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, New[string](), r)
		}()
		synctest.Wait()
		cancel()
		<-done
		if got := r.got(); len(got) != 0 {
			t.Errorf("Run did %v before its context ended, want nothing", got)
		}
	})
}
