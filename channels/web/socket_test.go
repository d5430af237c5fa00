package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/gorilla/websocket"
)

// socketFrame is one message of a socket as a client reads it.
type socketFrame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// dialSocket opens a socket of the API with the client's token; it is
// closed when the test ends.
func (c *client) dialSocket(t *testing.T, path string, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	url := "ws" + strings.TrimPrefix(c.base, "http") + path
	if header == nil && c.token != "" {
		header = bearer(c.token)
	}
	conn, res, err := websocket.DefaultDialer.Dial(url, header)
	if conn != nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, res, err
}

func readFrame(t *testing.T, conn *websocket.Conn) socketFrame {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(testWait))
	var f socketFrame
	if err := conn.ReadJSON(&f); err != nil {
		t.Fatalf("reading the socket: %v", err)
	}
	return f
}

// TestSocket reads a thread's socket: the current state first (thread
// list, messages, typing), then live changes; a socket of an unknown
// thread is 404, one without the token 401, and a plain GET 400.
func TestSocket(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0", Token: "socket-token"})
	serve(t, a, nil)
	c := newClient(t, a)
	th := a.st.mustCreate("socket thread")
	a.st.addMessage(th.ID, message{Role: roleUser, Author: "ann", Kind: "text", Text: "hello"})

	conn, _, err := c.dialSocket(t, "/api/threads/"+th.ID+"/socket", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		f := readFrame(t, conn)
		got = append(got, f.Event+" "+string(f.Data))
	}
	if !strings.HasPrefix(got[0], `threads {"threads":[{"id":"`+th.ID) || !strings.Contains(got[1], `"text":"hello"`) || got[2] != `typing {"typing":false}` {
		t.Fatalf("first frames = %q, want the thread list, the message, typing", got)
	}
	h, err := a.Post(t.Context(), ref(th.ID), channels.Message{Kind: channels.KindText, Text: "live"})
	if err != nil {
		t.Fatal(err)
	}
	f := readFrame(t, conn)
	for f.Event == "thread" { // the thread's entry of the list, which the post changed
		f = readFrame(t, conn)
	}
	if f.Event != "message" || !strings.Contains(string(f.Data), `"id":"`+string(h.ID)+`"`) {
		t.Fatalf("frame = %s %s, want the new message", f.Event, f.Data)
	}
	if err := a.Typing(t.Context(), ref(th.ID)); err != nil {
		t.Fatal(err)
	}
	for {
		f := readFrame(t, conn)
		if f.Event == "typing" {
			if string(f.Data) != `{"typing":true}` {
				t.Fatalf("typing frame = %s", f.Data)
			}
			break
		}
	}

	// The thread list's socket.
	list, _, err := c.dialSocket(t, "/api/socket", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, list); f.Event != "threads" {
		t.Fatalf("first frame of /api/socket = %s, want threads", f.Event)
	}

	for _, tc := range []struct {
		path   string
		header http.Header
		status int
	}{
		{"/api/threads/nosuchthread/socket", nil, http.StatusNotFound},
		{"/api/threads/" + th.ID + "/socket", http.Header{}, http.StatusUnauthorized},
		{"/api/socket?token=socket-token", http.Header{"Origin": {"http://evil.example"}}, http.StatusForbidden},
	} {
		_, res, err := c.dialSocket(t, tc.path, tc.header)
		if err == nil || res == nil || res.StatusCode != tc.status {
			t.Errorf("dial %s: %v (response %v), want status %d", tc.path, err, res, tc.status)
		}
	}
	if r := c.do(t.Context(), t, "GET", "/api/socket", nil); r.status != http.StatusBadRequest || !strings.Contains(r.errorText(), "WebSocket") {
		t.Errorf("plain GET /api/socket = %d %s, want 400 naming WebSocket", r.status, r.body)
	}
}
