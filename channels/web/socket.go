package web

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// A page keeps one live connection open for as long as it is open. As
// Server-Sent Events, that is an HTTP/1.1 connection, and a browser opens
// at most six of those per host: a seventh tab's stream waits, and so do
// every tab's requests. WebSockets do not count against that limit, so
// the page uses them; the event streams stay for other clients.

// socketWriteWait bounds one write to a WebSocket; a client that reads
// nothing for that long is dropped (it reconnects).
const socketWriteWait = 10 * time.Second

// upgrader turns a request into a WebSocket. The guard has already
// refused foreign origins, so CheckOrigin need not look again.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  512,
	WriteBufferSize: 8 << 10,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// threadSocket serves GET /api/threads/{id}/socket: the events of
// threadEvents over a WebSocket.
func (s *server) threadSocket(w http.ResponseWriter, r *http.Request) {
	s.socket(w, r, r.PathValue("id"))
}

// listSocket serves GET /api/socket: the events of listEvents over a
// WebSocket.
func (s *server) listSocket(w http.ResponseWriter, r *http.Request) {
	s.socket(w, r, "")
}

// socket streams thread id's events ("" for the thread list only) as
// WebSocket text messages {"event": name, "data": …}, starting with the
// current state as the event streams do. It pings every heartbeat; the
// client sends nothing (anything it sends is read and dropped).
func (s *server) socket(w http.ResponseWriter, r *http.Request, id string) {
	if !websocket.IsWebSocketUpgrade(r) {
		writeError(w, http.StatusBadRequest, "this endpoint speaks WebSocket only (send Upgrade: websocket)")
		return
	}
	// Counted before Upgrade hijacks the connection, while Shutdown
	// still waits for this request: Run's Wait then cannot miss it.
	s.sockets.Add(1)
	defer s.sockets.Done()
	sub, snap, end, ok := s.subscribe(w, r, id)
	if !ok {
		return
	}
	defer end()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade answered the request
	}
	// The reader handles control frames and notices the client going
	// away; it ends when the connection is closed below.
	closed := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer conn.Close()
	conn.SetReadLimit(4 << 10)
	wg.Go(func() {
		defer close(closed)
		for {
			if _, _, err := conn.NextReader(); err != nil {
				return
			}
		}
	})
	err = streamSocket(s.ctx.Done(), closed, conn, sub, snap, s.a.heartbeat)
	if err != nil {
		s.a.log.Debug("web chat: socket ended", "thread", id, "err", err)
	}
}

// streamSocket writes snap and then sub's events to conn until stop is
// closed (the gateway stops: it says goodbye), the client goes away
// (closed), the subscriber is dropped, or a write fails.
func streamSocket(stop, closed <-chan struct{}, conn *websocket.Conn, sub *subscriber, snap snapshot, heartbeat time.Duration) error {
	send := func(ev event) error {
		conn.SetWriteDeadline(time.Now().Add(socketWriteWait))
		return conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"event":%q,"data":%s}`, ev.name, ev.data()))
	}
	for _, ev := range snap.events(sub.thread != "") {
		if err := send(ev); err != nil {
			return err
		}
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "the gateway is shutting down")
			conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
			return nil
		case <-closed:
			return nil
		case <-sub.gone:
			return errors.New("socket dropped: the client fell behind or the thread was forgotten")
		case ev := <-sub.ch:
			if err := send(ev); err != nil {
				return err
			}
		case <-sub.list.ready:
			evs, _ := sub.nextList()
			for _, ev := range evs {
				if err := send(ev); err != nil {
					return err
				}
			}
		case <-tick.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(socketWriteWait)); err != nil {
				return err
			}
		}
	}
}
