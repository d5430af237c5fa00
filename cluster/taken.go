package cluster

import (
	"context"
	"sync"
)

// takenKeep is how many event ids a worker remembers having handed to
// their threads.
const takenKeep = 4096

// taken remembers the events a worker handed to their threads, by id, so
// that a copy of one is not handed over again: the stream gives an event
// out again when its forwarder gave up on the owner (no word from it
// within forwardSilence: a stalled machine) or its ack wait ran out, and
// the copy reaches the owner, forwarded or from the stream, while the
// first is still being taken or after it was. A copy of an event being
// taken waits for it; one of an event taken is taken at once, without
// the handler. An event the handler failed is forgotten (it is to be
// delivered again).
type taken struct {
	mu     sync.Mutex               // guards the fields below
	now    map[string]chan struct{} // being taken; closed when done
	done   map[string]bool          // taken: the last takenKeep of them
	order  []string                 // done's ids, oldest first (a ring)
	oldest int                      // index in order of the oldest
}

func newTaken() *taken {
	return &taken{now: map[string]chan struct{}{}, done: map[string]bool{}}
}

// take calls handle for the event id unless it was taken already, or
// once the copy being taken now was, without error; a copy counts as
// taken (nil). An event without an id is always handed over.
func (k *taken) take(ctx context.Context, id string, handle func() error) error {
	if id == "" {
		return handle()
	}
	for {
		k.mu.Lock()
		if k.done[id] {
			k.mu.Unlock()
			return nil
		}
		busy, ok := k.now[id]
		if !ok {
			mine := make(chan struct{})
			k.now[id] = mine
			k.mu.Unlock()
			err := handle()
			k.mu.Lock()
			delete(k.now, id)
			if err == nil {
				k.rememberLocked(id)
			}
			k.mu.Unlock()
			close(mine)
			return err
		}
		k.mu.Unlock()
		select {
		case <-busy: // taken (then done says so) or failed (taken here)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// rememberLocked adds id to done, forgetting the oldest beyond takenKeep.
func (k *taken) rememberLocked(id string) {
	k.done[id] = true
	if len(k.order) < takenKeep {
		k.order = append(k.order, id)
		return
	}
	delete(k.done, k.order[k.oldest])
	k.order[k.oldest] = id
	k.oldest = (k.oldest + 1) % takenKeep
}
