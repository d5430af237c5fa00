package web

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Limits on what one client can hold open.
const (
	// maxStreamsPerIdentity bounds the live streams (event streams and
	// WebSockets together) one identity has open: a page keeps one per
	// tab, so this is room for many tabs, not for thousands of unread
	// streams that each hold a subscriber and its buffer.
	maxStreamsPerIdentity = 32
	// bodyReadWait bounds the reading of a request body, whole: a client
	// that sends one slowly (a byte every few seconds) loses its
	// connection instead of holding it, and a goroutine, for ever. The
	// biggest body (a message with files) takes a second on this
	// machine's network, and under two minutes at 600 KB/s.
	bodyReadWait = 2 * time.Minute
)

// streamCount counts the open live streams of each identity.
type streamCount struct {
	mu   sync.Mutex     // guards open
	open map[string]int // by identity id
}

// acquire counts a new stream of id, or reports false when id has
// maxStreamsPerIdentity open already.
func (c *streamCount) acquire(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[id] >= maxStreamsPerIdentity {
		return false
	}
	if c.open == nil {
		c.open = map[string]int{}
	}
	c.open[id]++
	return true
}

// release ends a stream counted by acquire.
func (c *streamCount) release(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[id]--; c.open[id] <= 0 {
		delete(c.open, id)
	}
}

// openStream counts a live stream of r's sender, or answers 429 and
// reports false when they have too many open. The caller calls
// s.streams.release(identityOf(r).id) when the stream ends.
func (s *server) openStream(w http.ResponseWriter, r *http.Request) bool {
	who := identityOf(r)
	if s.streams.acquire(who.id) {
		return true
	}
	w.Header().Set("Retry-After", "10")
	writeError(w, http.StatusTooManyRequests, fmt.Sprintf("%s has %d live streams open already, the most one person may: close other tabs or event streams of this chat, then try again", who.id, maxStreamsPerIdentity))
	return false
}

// bodyDeadline bounds the reading of r's body to s.a.bodyWait from now;
// the HTTP server clears it for the connection's next request.
func (s *server) bodyDeadline(w http.ResponseWriter) {
	// Only fails where the connection has no deadlines (never over TCP).
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.a.bodyWait))
}
