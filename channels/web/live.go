package web

import "sync"

// The live events: what the store sends its subscribers (the page's event
// streams) when the state changes, and how a stream starts and ends.

// event is one live event. Its value is a snapshot taken when the state
// changed; it is encoded to JSON by the first stream that writes it, once
// for all, and never with the store locked: the gateway's posts and edits
// and the people's requests wait for nothing but the change itself.
type event struct {
	name string // "message", "typing" or "threads"
	body *lazyJSON
}

// lazyJSON is a value encoded on first use.
type lazyJSON struct {
	once   sync.Once
	encode func(any) []byte
	v      any
	data   []byte
}

// newEvent returns the event name with the snapshot v, to be encoded with
// encode.
func newEvent(name string, v any, encode func(any) []byte) event {
	return event{name: name, body: &lazyJSON{encode: encode, v: v}}
}

// data returns the event's JSON, encoding it on the first call. It may
// block on encoding; never call it with the store locked.
func (e event) data() []byte {
	l := e.body
	l.once.Do(func() {
		l.data = l.encode(l.v)
		l.v = nil
	})
	return l.data
}

// subscriber is one live event stream. Its channel is buffered; a
// subscriber that falls behind is dropped: gone is closed and the stream
// ends, so that the browser reconnects and receives the current state.
type subscriber struct {
	ch   chan event
	gone chan struct{}
	// The fields below are guarded by store.mu.
	thread  string // "" for the thread-list stream
	dropped bool
}

// subscribe starts a stream of the events of thread id ("" for the thread
// list only) and returns it with the current state, atomically, so no
// change is missed or sent twice. It returns errNoThread if the thread does
// not exist.
func (s *store) subscribe(id string) (*subscriber, snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := &subscriber{ch: make(chan event, subscriberBuffer), gone: make(chan struct{}), thread: id}
	snap := snapshot{threads: s.threadListLocked()}
	if id == "" {
		s.global[sub] = struct{}{}
		return sub, snap, nil
	}
	t := s.threads[id]
	if t == nil {
		return nil, snapshot{}, errNoThread
	}
	t.subs[sub] = struct{}{}
	snap.messages, snap.typing, snap.session = t.copyLocked(), t.typing, t.session
	return sub, snap, nil
}

// unsubscribe ends a stream started by subscribe.
func (s *store) unsubscribe(sub *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(sub)
}

// dropLocked removes sub and closes its gone channel, once.
func (s *store) dropLocked(sub *subscriber) {
	if sub.dropped {
		return
	}
	sub.dropped = true
	close(sub.gone)
	if sub.thread == "" {
		delete(s.global, sub)
	} else if t := s.threads[sub.thread]; t != nil {
		delete(t.subs, sub)
	}
}

func (s *store) publishMessageLocked(t *thread, m message) {
	s.publishLocked(t, newEvent("message", m, s.encode))
}

// publishLocked sends ev to the subscribers of t without blocking.
func (s *store) publishLocked(t *thread, ev event) {
	for sub := range t.subs {
		s.sendLocked(sub, ev)
	}
}

// publishThreadsLocked sends the thread list to every subscriber.
func (s *store) publishThreadsLocked() {
	ev := newEvent("threads", threadsBody{Threads: s.threadListLocked()}, s.encode)
	for sub := range s.global {
		s.sendLocked(sub, ev)
	}
	for _, t := range s.threads {
		s.publishLocked(t, ev)
	}
}

func (s *store) sendLocked(sub *subscriber, ev event) {
	select {
	case sub.ch <- ev:
	default:
		s.dropLocked(sub) // too slow: it reconnects and starts afresh
	}
}
