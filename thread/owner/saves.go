package owner

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/acpgw/gateway/channels"
)

// saves are a thread's store writes: performed in the order they were
// asked for, on a goroutine of their own that runs only while there is
// something to write, each with persist's attempts. The owner and the
// lane only queue them, so a slow or locked store never holds a stop, a
// prompt or a post. A write with a key replaces one of the same key
// that has not begun (it writes the whole of what the key names: the
// open messages, the binding, one choice), and goes behind the others.
// Once closed (the owner returned), a write is done at once, on the
// caller's goroutine.
type saves struct {
	log *slog.Logger
	ref channels.ThreadRef
	ctx context.Context // the thread's, without its end (records)

	mu      sync.Mutex
	queue   []save
	running bool
	drained chan struct{} // closed when the queue is empty again; nil while idle
	closed  bool
}

// save is one write.
type save struct {
	key  string // "" for a write nothing replaces
	what string // names the record in the log ("the turn")
	// write writes; nil for a barrier (after).
	write func(context.Context) error
	// failed is told the last attempt's error.
	failed func(error)
	// then runs once written (or failed); for a barrier, what it runs.
	then func()
}

func newSaves(log *slog.Logger, ref channels.ThreadRef, ctx context.Context) *saves {
	return &saves{log: log, ref: ref, ctx: ctx}
}

// write queues a write; failed (required) is told the error when every
// attempt failed.
func (s *saves) write(key, what string, write func(context.Context) error, failed func(error)) {
	s.push(save{key: key, what: what, write: write, failed: failed})
}

// after runs f once everything queued so far is written (or given up).
func (s *saves) after(f func()) { s.push(save{then: f}) }

func (s *saves) push(w save) {
	s.mu.Lock()
	if s.closed && !s.running {
		s.mu.Unlock()
		s.do(w)
		return
	}
	if w.key != "" {
		if i := slices.IndexFunc(s.queue, func(q save) bool { return q.key == w.key }); i >= 0 {
			s.queue = slices.Delete(s.queue, i, i+1)
		}
	}
	s.queue = append(s.queue, w)
	if !s.running {
		s.running = true
		s.drained = make(chan struct{})
		go s.run(s.drained)
	}
	s.mu.Unlock()
}

func (s *saves) run(drained chan struct{}) {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.running, s.drained = false, nil
			s.mu.Unlock()
			close(drained)
			return
		}
		w := s.queue[0]
		s.queue = slices.Delete(s.queue, 0, 1)
		s.mu.Unlock()
		s.do(w)
	}
}

func (s *saves) do(w save) {
	if w.write != nil {
		if err := Persist(s.ctx, s.log, s.ref, w.what, w.write); err != nil {
			w.failed(err)
		}
	}
	if w.then != nil {
		w.then()
	}
}

// flush waits until what was queued before it is written, or ctx ends;
// for a read of what the thread wrote. Not on the owner.
func (s *saves) flush(ctx context.Context) {
	s.mu.Lock()
	d := s.drained
	s.mu.Unlock()
	if d == nil {
		return
	}
	select {
	case <-d:
	case <-ctx.Done():
	}
}

// close waits for what is queued and from then on writes at once: the
// thread's owner has returned, and whoever comes after it (a deleted
// thread's cleanup, the thread's next owner) finds its records.
func (s *saves) close() {
	s.mu.Lock()
	s.closed = true
	d := s.drained
	s.mu.Unlock()
	if d != nil {
		<-d
	}
}
