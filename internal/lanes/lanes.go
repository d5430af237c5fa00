// Package lanes runs work in order per key, each key on its own
// goroutine: the chat adapters deliver a thread's inbound events in order
// while a slow thread (a lookup or a REST call that waits) holds up no
// other.
package lanes

import "sync"

// MaxQueued bounds the backlog of one key; beyond it new work is dropped
// (and Do reports it), so a flood cannot grow memory without bound.
const MaxQueued = 1000

// Group runs functions in order per key. A key's goroutine starts with its
// first function and ends as soon as its queue is empty, so an idle key
// holds no goroutine. The group owns its goroutines: Close stops new work
// and waits for them. Its methods are safe for concurrent use.
type Group struct {
	wg sync.WaitGroup

	mu     sync.Mutex // guards the fields below
	queues map[string][]func()
	closed bool
}

// New returns an empty group.
func New() *Group {
	return &Group{queues: map[string][]func(){}}
}

// Do queues f behind the earlier work of key. It never blocks. It returns
// false when f was dropped: the group is closed or the key's backlog is
// full.
func (g *Group) Do(key string, f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	q, running := g.queues[key]
	if len(q) >= MaxQueued {
		return false
	}
	g.queues[key] = append(q, f)
	if !running {
		g.wg.Go(func() { g.drain(key) })
	}
	return true
}

// drain runs key's queue until it is empty, then forgets the key.
func (g *Group) drain(key string) {
	for {
		g.mu.Lock()
		q := g.queues[key]
		if len(q) == 0 {
			delete(g.queues, key)
			g.mu.Unlock()
			return
		}
		f := q[0]
		q[0] = nil
		g.queues[key] = q[1:]
		g.mu.Unlock()
		f()
	}
}

// Close refuses new work and waits until every queued function has run.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
