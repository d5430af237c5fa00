package web

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The thread list's changes reach the streams through one feed that all
// of them read, not a queue each: a change is one entry in the feed
// whatever the number of open pages, and the pages are woken for the list
// at most once every listInterval, each writing the same frame (the
// changes since the last one, one entry per thread, encoded once for
// all). With 500 threads and a page on each, a turn costs the list one
// map entry instead of 500 queues and 500 wake-ups.

// Bounds of the list feed.
const (
	// listInterval is the least time between two frames of the list
	// feed. The first change after a quiet spell goes out at once; the
	// changes that follow within the interval go out together at its
	// end.
	listInterval = 100 * time.Millisecond
	// listKeep is how many frames the feed keeps for the streams behind
	// it (listKeep × listInterval, at the busiest); a stream further
	// behind gets the whole list again instead, so one stuck page does
	// not hold every frame since it stopped reading.
	listKeep = 64
)

// listFeed is the thread list's changes, in frames, shared by every
// stream. It is guarded by store.mu.
type listFeed struct {
	pending map[string]event // the changes of the next frame, by thread id
	tail    *listFrame       // the next frame, not sent yet
	last    time.Time        // when the last frame was sent
	timer   *time.Timer      // set while the next frame is due
	sent    []*listFrame     // the last listKeep frames, oldest first
}

// listFrame is one frame of the list feed. ready is closed when it is
// sent; its body is set then, and taken away (nil) once the frame is
// older than the listKeep frames the feed keeps.
type listFrame struct {
	ready chan struct{}
	body  atomic.Pointer[frameBody]
}

func newListFrame() *listFrame { return &listFrame{ready: make(chan struct{})} }

// frameBody is what a sent frame holds: its events, in thread id order,
// and the frame after it.
type frameBody struct {
	events []event
	next   *listFrame

	sseOnce sync.Once
	sse     []byte
}

// sseBytes returns the frame as Server-Sent Events, encoded on the first
// call, for every stream. It may block on encoding; never call it with
// the store locked.
func (b *frameBody) sseBytes() []byte {
	b.sseOnce.Do(func() {
		var buf bytes.Buffer
		for _, ev := range b.events {
			fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", ev.name, ev.data())
		}
		b.sse = buf.Bytes()
	})
	return b.sse
}

// publishListLocked records ev as the latest change of thread id's entry
// in the list, for the next frame, and sends the frame when it is due.
// Without streams there is no one to tell: a stream that starts later
// gets the list as it is (subscribe).
func (s *store) publishListLocked(id string, ev event) {
	f := &s.feed
	if len(s.global) == 0 {
		return
	}
	if f.pending == nil {
		f.pending = make(map[string]event)
	}
	f.pending[id] = ev
	if f.timer != nil {
		return // the frame is due already
	}
	if wait := listInterval - time.Since(f.last); wait > 0 {
		f.timer = time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			f.timer = nil
			s.sendListLocked()
		})
		return
	}
	s.sendListLocked()
}

// sendListLocked sends the pending changes as the feed's next frame and
// wakes the streams.
func (s *store) sendListLocked() {
	f := &s.feed
	if len(f.pending) == 0 {
		return
	}
	evs := make([]event, 0, len(f.pending))
	for _, id := range slices.Sorted(maps.Keys(f.pending)) {
		evs = append(evs, f.pending[id])
	}
	clear(f.pending)
	fr := f.tail
	f.tail = newListFrame()
	fr.body.Store(&frameBody{events: evs, next: f.tail})
	close(fr.ready)
	f.last = time.Now()
	f.sent = append(f.sent, fr)
	if n := len(f.sent) - listKeep; n > 0 {
		for _, old := range f.sent[:n] {
			old.body.Store(nil)
		}
		f.sent = append(f.sent[:0:0], f.sent[n:]...)
	}
}

// listAgain returns the whole thread list and the feed's next frame,
// atomically: for a stream so far behind that the frames it missed are
// forgotten.
func (s *store) listAgain() ([]threadInfo, *listFrame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threadListLocked(), s.feed.tail
}

// nextList returns the list events to send now that sub's next frame is
// sent, each as it is written, and moves sub past them: the frame's
// events, or the whole list when the frame was forgotten. sse is the
// frame as Server-Sent Events, nil with the whole list.
func (sub *subscriber) nextList() (evs []event, sse []byte) {
	b := sub.list.body.Load()
	if b == nil {
		threads, next := sub.st.listAgain()
		sub.list = next
		return []event{newEvent("threads", threadsBody{Threads: threads}, mustJSON)}, nil
	}
	sub.list = b.next
	return b.events, b.sseBytes()
}
