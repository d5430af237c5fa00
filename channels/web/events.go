package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// threadEvents serves GET /api/threads/{id}/events: the thread's live
// events as Server-Sent Events, starting with its current state.
func (s *server) threadEvents(w http.ResponseWriter, r *http.Request) {
	s.events(w, r, r.PathValue("id"))
}

// listEvents serves GET /api/events: thread-list changes only, for a page
// with no thread open.
func (s *server) listEvents(w http.ResponseWriter, r *http.Request) {
	s.events(w, r, "")
}

func (s *server) events(w http.ResponseWriter, r *http.Request, id string) {
	sub, snap, end, ok := s.subscribe(w, r, id)
	if !ok {
		return
	}
	defer end()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	err := streamEvents(r.Context(), s.ctx.Done(), w, rc.Flush, sub, snap, s.a.heartbeat)
	if err != nil {
		s.a.log.Debug("web chat: event stream ended", "thread", id, "err", err)
	}
}

// subscribe opens a live stream of thread id's events ("" for the
// thread list only) for r's identity: it returns the subscriber, the
// current state, and end, which closes the stream. On failure it answers
// and returns false.
func (s *server) subscribe(w http.ResponseWriter, r *http.Request, id string) (*subscriber, snapshot, func(), bool) {
	if !s.openStream(w, r) {
		return nil, snapshot{}, nil, false
	}
	who := identityOf(r).id
	sub, snap, err := s.a.st.subscribe(id)
	if err != nil {
		writeStateError(w, err)
		s.streams.release(who)
		return nil, snapshot{}, nil, false
	}
	end := func() {
		s.a.st.unsubscribe(sub)
		s.streams.release(who)
	}
	return sub, snap, end, true
}

// events returns the events a stream starts with: the thread list, and
// for a thread's stream (thread) its messages, typing state and session.
func (snap snapshot) events(thread bool) []event {
	evs := []event{newEvent("threads", threadsBody{Threads: snap.threads}, mustJSON)}
	if !thread {
		return evs
	}
	for _, m := range snap.messages {
		evs = append(evs, newEvent("message", m, mustJSON))
	}
	evs = append(evs, newEvent("typing", typingBody{Typing: snap.typing}, mustJSON))
	if snap.session != nil {
		evs = append(evs, newEvent("session", snap.session, mustJSON))
	}
	return evs
}

// streamEvents writes snap and then sub's events to w as Server-Sent
// Events, flushing after each, with a comment line every heartbeat while
// idle. It returns nil when ctx ends or stop is closed, an error when the
// subscriber was dropped (it fell behind; the client reconnects) or w
// fails.
func streamEvents(ctx context.Context, stop <-chan struct{}, w io.Writer, flush func() error, sub *subscriber, snap snapshot, heartbeat time.Duration) error {
	// A reconnecting browser waits 2 s and then receives the whole state
	// again, so no event id (Last-Event-ID) is needed.
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return err
	}
	for _, ev := range snap.events(sub.thread != "") {
		if err := writeEvent(w, ev); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-stop:
			return nil
		case ev := <-sub.ch:
			if err := writeEvent(w, ev); err != nil {
				return err
			}
		case <-sub.list.ready:
			evs, sse := sub.nextList()
			if sse != nil {
				if _, err := w.Write(sse); err != nil {
					return err
				}
				break
			}
			for _, ev := range evs {
				if err := writeEvent(w, ev); err != nil {
					return err
				}
			}
		case <-sub.gone:
			return fmt.Errorf("event stream dropped: the client fell behind or the thread was forgotten")
		case <-tick.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
}

// writeEvent writes one event; its data is one line of JSON.
func writeEvent(w io.Writer, ev event) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data())
	return err
}
