package session

import (
	"slices"
	"sync"
)

// slots are the process slots: how many agent processes may run at once
// (Limits.MaxProcesses), and the threads waiting in line for one, first
// come, first served across threads.
type slots struct {
	pool    chan struct{} // one token per running agent process
	mu      sync.Mutex    // guards waiters and hands slots over
	waiters []*waiter     // first come first
}

// waiter is a thread waiting for a process slot.
type waiter struct {
	granted chan struct{} // closed when a slot was handed to it
}

func newSlots(n int) *slots { return &slots{pool: make(chan struct{}, n)} }

// take takes a slot if one is free and nobody waits for one (w nil);
// else it puts a waiter in line and returns it, with how many wait
// ahead of it.
func (s *slots) take() (w *waiter, ahead int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiters) == 0 {
		select {
		case s.pool <- struct{}{}:
			return nil, 0
		default:
		}
	}
	w = &waiter{granted: make(chan struct{})}
	s.waiters = append(s.waiters, w)
	return w, len(s.waiters) - 1
}

// leave takes w out of line; false when a slot was handed to it
// meanwhile (which the caller then releases).
func (s *slots) leave(w *waiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.waiters, w)
	if i < 0 {
		return false
	}
	s.waiters = slices.Delete(s.waiters, i, i+1)
	return true
}

// release gives a slot back: to the first in line, if any, else to the
// pool.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiters) > 0 {
		w := s.waiters[0]
		s.waiters = s.waiters[1:]
		close(w.granted)
		return
	}
	<-s.pool
}

// waiting reports whether a thread waits for a slot.
func (s *slots) waiting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters) > 0
}
