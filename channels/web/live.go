package web

import (
	"sync"
)

// The live events: what the store sends its subscribers (the page's event
// streams) when the state changes, and how a stream starts and ends.

// event is one live event. Its value is a snapshot taken when the state
// changed; it is encoded to JSON by the first stream that writes it, once
// for all, and never with the store locked: the gateway's posts and edits
// and the people's requests wait for nothing but the change itself.
type event struct {
	name string // "message", "typing", "session", "threads", "thread" or "threadRemoved"
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
//
// The changes of the thread list do not queue in ch: every stream reads
// them from the store's one list feed (listfeed.go), from its own
// position, and never falls behind on the list.
type subscriber struct {
	ch   chan event
	gone chan struct{}
	st   *store // to read the whole list again (listAgain)

	// list is the next frame of the list feed to send; only the stream
	// reads and moves it.
	list *listFrame

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
	var t *thread
	if id != "" {
		var err error
		if t, err = s.threadLocked(id); err != nil { // it may unlock: first
			return nil, snapshot{}, err
		}
	}
	sub := &subscriber{ch: make(chan event, subscriberBuffer), gone: make(chan struct{}), st: s, list: s.feed.tail, thread: id}
	if t == nil {
		s.global[sub] = struct{}{}
		return sub, snapshot{threads: s.threadListLocked()}, nil
	}
	snap := snapshot{threads: s.threadListLocked()}
	s.global[sub] = struct{}{}
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
	delete(s.global, sub)
	if t := s.threads[sub.thread]; t != nil {
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

// publishThreadLocked sends t's entry of the thread list, as a "thread"
// event, to every stream (listfeed.go): the one thread that changed,
// encoded once for all of them.
func (s *store) publishThreadLocked(t *thread) {
	s.publishListLocked(t.id, newEvent("thread", t.info(), s.encode))
}

// publishRemovedLocked tells every stream that thread id is no longer in
// the list.
func (s *store) publishRemovedLocked(id string) {
	s.publishListLocked(id, newEvent("threadRemoved", removedBody{ID: id}, s.encode))
}

// removedBody is the JSON of "threadRemoved" events.
type removedBody struct {
	ID string `json:"id"`
}

func (s *store) sendLocked(sub *subscriber, ev event) {
	select {
	case sub.ch <- ev:
	default:
		s.dropLocked(sub) // too slow: it reconnects and starts afresh
	}
}
