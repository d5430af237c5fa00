package discord

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
)

// hold keeps back Discord's answer to one request: the fake does what it
// asks (a message posted is shown to everyone at once, as on Discord) and
// answers only when the test releases it.
type hold struct {
	method, path string // the request's method and a part of its path
	body         string // a part of its body
	taken        bool
	reached      chan struct{} // closed once the request was handled
	release      chan struct{} // closed by the test: answer it
}

// holdAnswer holds the answer to the next request of method whose path
// contains path and whose body contains body.
func (f *fakeDiscord) holdAnswer(method, path, body string) *hold {
	h := &hold{method: method, path: path, body: body, reached: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds = append(f.holds, h)
	return h
}

// takeHoldLocked returns the hold that matches a request, or nil.
func (f *fakeDiscord) takeHoldLocked(method, path string, body []byte) *hold {
	for _, h := range f.holds {
		if !h.taken && h.method == method && strings.Contains(path, h.path) && bytes.Contains(body, []byte(h.body)) {
			h.taken = true
			return h
		}
	}
	return nil
}

// answerHeld has serve handle a request into a recorder, then, once h is
// released (or the client gave up), writes the recorded answer to w.
func answerHeld(h *hold, w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter)) {
	rec := httptest.NewRecorder()
	serve(rec)
	close(h.reached)
	select {
	case <-h.release:
	case <-r.Context().Done():
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// waitReached waits until the held request was handled.
func (h *hold) waitReached(ctx context.Context) bool {
	select {
	case <-h.reached:
		return true
	case <-ctx.Done():
		return false
	}
}
