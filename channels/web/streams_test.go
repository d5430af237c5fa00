package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// One identity holds at most maxStreamsPerIdentity live streams, event
// streams and WebSockets together: the next is refused with 429 and a
// message that says why; another person is not affected; a closed stream
// makes room again.
func TestStreamsArePerIdentityCapped(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0", Users: map[string]string{"ann": "ann-streams-token", "bob": "bob-streams-token"}})
	serve(t, a, nil)
	ann := newClient(t, a)
	ann.token = "ann-streams-token"
	bob := &client{base: ann.base, token: "bob-streams-token", hc: ann.hc}
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0}} // no Timeout: bodies stream
	t.Cleanup(hc.CloseIdleConnections)
	open := func(c *client) (*http.Response, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		res, err := hc.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); res.Body.Close() })
		return res, cancel
	}
	var first context.CancelFunc
	for i := range maxStreamsPerIdentity - 1 {
		res, cancel := open(ann)
		if res.StatusCode != 200 {
			t.Fatalf("stream %d = %d, want 200", i+1, res.StatusCode)
		}
		if i == 0 {
			first = cancel
		}
	}
	if _, res, err := ann.dialSocket(t, "/api/socket", nil); err != nil {
		t.Fatalf("socket %d: %v (%v)", maxStreamsPerIdentity, err, res)
	}
	res, _ := open(ann)
	var body []byte
	if res.StatusCode != 200 { // a stream's body never ends
		body, _ = io.ReadAll(res.Body)
	}
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), fmt.Sprintf("web:ann has %d live streams open already", maxStreamsPerIdentity)) {
		t.Errorf("stream %d = %d %s, want 429 saying why", maxStreamsPerIdentity+1, res.StatusCode, body)
	}
	if _, res, err := ann.dialSocket(t, "/api/socket", nil); err == nil || res == nil || res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a socket beyond the cap = %v, %v; want 429", err, res)
	}
	if res, _ := open(bob); res.StatusCode != 200 {
		t.Errorf("bob's stream = %d, want 200 (ann's streams are ann's)", res.StatusCode)
	}

	first()
	deadline := time.Now().Add(testWait)
	for {
		res, _ := open(ann)
		if res.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream after one closed = %d, want 200 within %v", res.StatusCode, testWait)
		}
		res.Body.Close()
	}
}

// A request body that comes too slowly loses its connection once
// bodyWait has passed, whether the route reads it (408) or not (the
// answer, then the connection closed), instead of holding it for ever.
func TestSlowBodiesAreCut(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0", Token: "slow-body-token"})
	a.bodyWait = 200 * time.Millisecond
	serve(t, a, nil)
	for _, tc := range []struct{ name, method, path, status string }{
		{"read", "POST", "/api/threads", "408"},
		{"not read", "GET", "/", "200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", a.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(testWait))
			// 100 bytes announced, one sent, the rest never.
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer slow-body-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", tc.method, tc.path, a.Addr())
			rd := bufio.NewReader(conn)
			res, err := http.ReadResponse(rd, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			if got := fmt.Sprint(res.StatusCode); got != tc.status {
				t.Errorf("status %s, want %s", got, tc.status)
			}
			io.Copy(io.Discard, res.Body)
			if _, err := rd.ReadByte(); err != io.EOF {
				t.Errorf("after the answer: %v, want the connection closed (EOF)", err)
			}
		})
	}
}
