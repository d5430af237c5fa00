package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event as a client reads it.
type sseEvent struct {
	name string
	data string
}

// stream is an open event stream read by a goroutine the test owns.
type stream struct {
	events chan sseEvent
	status int
	header http.Header
}

// openStream connects to an event stream; the reader stops when the test
// ends or the server closes the stream (then events is closed).
func (c *client) openStream(t *testing.T, path string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := &http.Client{Transport: &http.Transport{}} // no Timeout: the body streams
	res, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	s := &stream{events: make(chan sseEvent, 1024), status: res.StatusCode, header: res.Header}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(s.events)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					select {
					case s.events <- ev:
					case <-ctx.Done():
						return
					}
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry:"):
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		hc.CloseIdleConnections()
	})
	return s
}

// next returns the next event named name, skipping others, or fails the
// test after testWait or when the stream ends.
func (s *stream) next(t *testing.T, name string) sseEvent {
	t.Helper()
	timeout := time.After(testWait)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("event stream ended while waiting for a %q event", name)
			}
			if ev.name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event within %v", name, testWait)
		}
	}
}

// nextMessage returns the next message event.
func (s *stream) nextMessage(t *testing.T) message {
	t.Helper()
	var m message
	if err := json.Unmarshal([]byte(s.next(t, "message").data), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// ended waits until the server closed the stream.
func (s *stream) ended(t *testing.T) {
	t.Helper()
	timeout := time.After(testWait)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("event stream still open after %v", testWait)
		}
	}
}
