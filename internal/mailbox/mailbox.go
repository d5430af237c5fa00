// Package mailbox is the one loop of the gateway's single-owner
// goroutines (a thread's owner, its delivery lane's runner, its reaction
// runner): a queue that never blocks a sender, and Run, which hands the
// owner what was sent, in order, and calls its Step when a timer it asked
// for falls due.
package mailbox

import (
	"context"
	"sync"
	"time"
)

// Box is an unbounded queue of T read by one goroutine. Put never blocks.
// The zero value is not usable; use New.
type Box[T any] struct {
	mu     sync.Mutex // guards items and closed, never the owner's state
	items  []T
	closed bool
	wake   chan struct{} // capacity 1: "the box changed"
}

// New returns an empty, open box.
func New[T any]() *Box[T] { return &Box[T]{wake: make(chan struct{}, 1)} }

// Put adds v unless the box is closed, and wakes its reader; it reports
// whether v went in.
func (b *Box[T]) Put(v T) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	b.items = append(b.items, v)
	b.mu.Unlock()
	b.signal()
	return true
}

// next takes the oldest item, if any, and reports whether the box is
// closed. One at a time: what is not taken yet stays for Close and
// CloseIfEmpty to see.
func (b *Box[T]) next() (v T, ok, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || len(b.items) == 0 {
		return v, false, b.closed
	}
	v = b.items[0]
	var zero T
	b.items[0] = zero
	b.items = b.items[1:]
	if len(b.items) == 0 {
		b.items = nil
	}
	return v, true, false
}

// CloseIfEmpty closes the box unless items wait in it, and reports
// whether it closed it.
func (b *Box[T]) CloseIfEmpty() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) > 0 {
		return false
	}
	b.closed = true
	return true
}

// Close refuses items from now on, wakes the reader (whose Run then
// returns) and returns the items not taken, for their senders to be
// answered.
func (b *Box[T]) Close() []T {
	b.mu.Lock()
	b.closed = true
	left := b.items
	b.items = nil
	b.mu.Unlock()
	b.signal()
	return left
}

func (b *Box[T]) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Owner is what Run drives.
type Owner[T any] interface {
	// Handle is one item, on Run's goroutine.
	Handle(now time.Time, v T)
	// Step runs what is due at now, once the box is empty, and returns
	// when it wants to be stepped again: zero for not until an item
	// comes.
	Step(now time.Time) time.Time
	// Done reports that Run should return (the owner's work is over);
	// Run asks after each item and each step.
	Done() bool
}

// Run hands o every item put in b, in order, and steps it when the box
// is empty and when the time its last Step asked for comes, until o is
// Done, b is closed or ctx ends. Items left in b when it returns stay
// there for Close.
func Run[T any](ctx context.Context, b *Box[T], o Owner[T]) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for ctx.Err() == nil && !o.Done() {
		v, ok, closed := b.next()
		if closed {
			return
		}
		if ok {
			o.Handle(time.Now(), v)
			continue
		}
		next := o.Step(time.Now())
		if o.Done() {
			return
		}
		var tc <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next))
			tc = timer.C
		}
		select {
		case <-ctx.Done():
		case <-b.wake:
		case <-tc:
		}
		timer.Stop()
	}
}
