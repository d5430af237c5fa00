package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// testWait bounds every wait of these tests.
const testWait = 10 * time.Second

// inbox records what Run's handler receives.
type inbox chan channels.Inbound

// next returns the next inbound event or fails the test after testWait.
func (in inbox) next(t *testing.T) channels.Inbound {
	t.Helper()
	select {
	case ev := <-in:
		return ev
	case <-time.After(testWait):
		t.Fatalf("no inbound event within %v", testWait)
		return channels.Inbound{}
	}
}

// empty fails the test if an inbound event is waiting.
func (in inbox) empty(t *testing.T) {
	t.Helper()
	select {
	case ev := <-in:
		t.Errorf("unexpected inbound event %+v", ev)
	default:
	}
}

// serve runs a.Run until the test ends, delivering inbound events to the
// returned inbox (and then calling also, if set), and waits until it
// listens.
func serve(t *testing.T, a *Adapter, also func(context.Context, channels.Inbound)) inbox {
	t.Helper()
	in := make(inbox, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, func(ctx context.Context, ev channels.Inbound) {
			if also != nil {
				also(ctx, ev)
			}
			select {
			case in <- ev:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(testWait):
			t.Errorf("Run did not return within %v", testWait)
		}
	})
	select {
	case <-a.Ready():
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	case <-time.After(testWait):
		t.Fatal("Run did not listen in time")
	}
	return in
}

// client talks to an adapter's API over real HTTP.
type client struct {
	base  string // http://host:port
	token string
	hc    *http.Client
}

func newClient(t *testing.T, a *Adapter) *client {
	t.Helper()
	hc := &http.Client{Timeout: testWait, Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	token := a.o.Token
	if token == "" {
		token = a.o.LocalToken
	}
	if token == "" && len(a.o.Users) > 0 {
		token = a.o.Users[slices.Sorted(maps.Keys(a.o.Users))[0]]
	}
	return &client{base: "http://" + a.Addr(), token: token, hc: hc}
}

// bearer is the header that sends token.
func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// response is an API answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errorText returns the "error" of a JSON error body.
func (r response) errorText() string {
	var e errorBody
	json.Unmarshal(r.body, &e)
	return e.Error
}

// decode decodes the body into v or fails the test.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// do sends a request; a non-nil body that is not a string or []byte is
// encoded as JSON. It fails the test on transport errors.
func (c *client) do(ctx context.Context, t *testing.T, method, path string, body any) response {
	t.Helper()
	r, err := c.try(ctx, method, path, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (c *client) try(ctx context.Context, method, path string, body any, header http.Header) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return response{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}, nil
}

// want2xx returns an error unless r has status want.
func (r response) want(status int) error {
	if r.status != status {
		return fmt.Errorf("status %d (%s), want %d", r.status, bytes.TrimSpace(r.body), status)
	}
	return nil
}

// newThread creates a thread through the API and returns its id.
func (c *client) newThread(ctx context.Context, t *testing.T) string {
	t.Helper()
	r := c.do(ctx, t, "POST", "/api/threads", nil)
	if err := r.want(http.StatusCreated); err != nil {
		t.Fatalf("POST /api/threads: %v", err)
	}
	var th threadInfo
	r.decode(t, &th)
	if th.ID == "" {
		t.Fatalf("POST /api/threads = %s, want an id", r.body)
	}
	return th.ID
}

// messages returns the messages of thread id.
func (c *client) messages(ctx context.Context, id string) (messagesBody, error) {
	r, err := c.try(ctx, "GET", "/api/threads/"+id+"/messages", nil, nil)
	if err != nil {
		return messagesBody{}, err
	}
	if err := r.want(http.StatusOK); err != nil {
		return messagesBody{}, fmt.Errorf("GET messages: %w", err)
	}
	var b messagesBody
	if err := json.Unmarshal(r.body, &b); err != nil {
		return messagesBody{}, err
	}
	return b, nil
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
