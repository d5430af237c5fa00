package discord

import "sync"

// lanes runs functions in order per key, each key on its own goroutine, so
// that events of one thread stay in order while a slow thread (a REST call
// that waits) never holds up another. The lanes own their goroutines:
// close stops new work and waits for them.
type lanes struct {
	wg sync.WaitGroup

	mu     sync.Mutex // guards the fields below
	queues map[string][]func()
	closed bool
}

// maxQueued bounds the backlog of one key; beyond it new work is dropped
// (and do reports it), so a flood cannot grow memory without bound.
const maxQueued = 1000

func newLanes() *lanes {
	return &lanes{queues: map[string][]func(){}}
}

// do queues f behind the earlier work of key. It never blocks. It returns
// false when f was dropped: the lanes are closed or the key's backlog is
// full.
func (l *lanes) do(key string, f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	q, running := l.queues[key]
	if len(q) >= maxQueued {
		return false
	}
	l.queues[key] = append(q, f)
	if !running {
		l.wg.Go(func() { l.drain(key) })
	}
	return true
}

// drain runs key's queue until it is empty, then forgets the key.
func (l *lanes) drain(key string) {
	for {
		l.mu.Lock()
		q := l.queues[key]
		if len(q) == 0 {
			delete(l.queues, key)
			l.mu.Unlock()
			return
		}
		f := q[0]
		q[0] = nil
		l.queues[key] = q[1:]
		l.mu.Unlock()
		f()
	}
}

// close refuses new work and waits until every queued function has run.
func (l *lanes) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.wg.Wait()
}
