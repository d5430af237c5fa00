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
	if !s.openStream(w, r) {
		return
	}
	defer s.streams.release(identityOf(r).id)
	sub, snap, err := s.a.st.subscribe(id)
	if err != nil {
		writeStateError(w, err)
		return
	}
	defer s.a.st.unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	err = streamEvents(r.Context(), s.ctx.Done(), w, rc.Flush, sub, snap, s.a.heartbeat)
	if err != nil {
		s.a.log.Debug("web chat: event stream ended", "thread", id, "err", err)
	}
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
	if err := writeEvent(w, newEvent("threads", threadsBody{Threads: snap.threads}, mustJSON)); err != nil {
		return err
	}
	if sub.thread != "" {
		for _, m := range snap.messages {
			if err := writeEvent(w, newEvent("message", m, mustJSON)); err != nil {
				return err
			}
		}
		if err := writeEvent(w, newEvent("typing", typingBody{Typing: snap.typing}, mustJSON)); err != nil {
			return err
		}
		if snap.session != nil {
			if err := writeEvent(w, newEvent("session", snap.session, mustJSON)); err != nil {
				return err
			}
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
