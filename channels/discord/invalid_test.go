package discord

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gorilla/websocket"
)

// recordingGate is an IdentifyGate that gives every turn at once and
// records when each was taken.
type recordingGate struct {
	mu    sync.Mutex // guards takes
	takes []time.Time
}

func (g *recordingGate) Take(context.Context, string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.takes = append(g.takes, time.Now())
	return nil
}

func (g *recordingGate) Renew(context.Context, string) error { return nil }

func (g *recordingGate) taken() []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Time(nil), g.takes...)
}

// wsFrame is a server's unmasked, final websocket frame of opcode op.
func wsFrame(op byte, payload []byte) []byte {
	b := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		b = append(b, byte(n))
	case n < 1<<16:
		b = append(b, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, payload...)
}

// serveFrames answers the websocket handshake on c and writes frames, each
// after the one before was read; it reports when it wrote each.
func serveFrames(t *testing.T, c net.Conn, frames [][]byte, wrote chan<- time.Time) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		t.Errorf("reading the upgrade request: %v", err)
		return
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	for _, f := range frames {
		if _, err := c.Write(f); err != nil {
			t.Errorf("writing a frame: %v", err)
			return
		}
		wrote <- time.Now()
	}
}

// TestInvalidSessionWaitsAndTakesTheTurn: the adapter's gateway connection
// (its websocket dialer, as discordgo uses it) hands an INVALID_SESSION
// (op 9) on only after a wait of 1 to 5 s and the identify's turn taken
// in the gate, so that the IDENTIFY discordgo answers it with waits, and
// takes its turn like every other identify; the frames before it, small
// and large, pass unchanged and at once. In virtual time.
func TestInvalidSessionWaitsAndTakesTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &recordingGate{}
		a, err := New(Options{Token: "t", IdentifyGate: gate})
		if err != nil {
			t.Fatal(err)
		}
		a.mu.Lock()
		a.concurrency = 1 // as GET /gateway/bot would say
		a.mu.Unlock()
		hello := []byte(`{"op":10,"d":{"heartbeat_interval":41250}}`)
		large := []byte(`{"op":0,"t":"GUILD_CREATE","s":2,"d":{"name":"` + strings.Repeat("g", 70000) + `"}}`)
		invalid := []byte(`{"t":null,"s":null,"op":9,"d":false}`)
		wrote := make(chan time.Time, 3)
		a.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveFrames(t, server, [][]byte{wsFrame(1, hello), wsFrame(1, large), wsFrame(1, invalid)}, wrote)
			return client, nil
		}
		start := time.Now()
		ws, _, err := a.s.Dialer.DialContext(t.Context(), "ws://gateway.test/?v=9&encoding=json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		for i, want := range [][]byte{hello, large, invalid} {
			_, got, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("frame %d = %.60q…, want %.60q…", i, got, want)
			}
			sent := <-wrote
			if d := time.Since(sent); i < 2 && d != 0 {
				t.Errorf("frame %d was read %v after it was sent, want at once", i, d)
			} else if i == 2 && (d < minInvalidWait || d > maxInvalidWait) {
				t.Errorf("the INVALID_SESSION was read %v after it was sent, want 1 to 5 s", d)
			}
		}
		takes := gate.taken()
		if len(takes) != 2 {
			t.Fatalf("%d identify turns taken, want 2 (the dial's, and the one after INVALID_SESSION)", len(takes))
		}
		if d := takes[1].Sub(start); d < minInvalidWait {
			t.Errorf("the turn after INVALID_SESSION was taken %v after the start, want after the wait", d)
		}
	})
}

// The wait after an INVALID_SESSION is random, from 1 to 5 s.
func TestInvalidWait(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := invalidWait()
		if d < minInvalidWait || d > maxInvalidWait {
			t.Fatalf("invalidWait() = %v, want 1 to 5 s", d)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Errorf("%d distinct waits in 1000, want them random", len(seen))
	}
}

// An op 9 is known in text and in zlib-compressed binary frames; other
// payloads are not one.
func TestIsInvalidSession(t *testing.T) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte(`{"op":9,"d":true}`))
	w.Close()
	for _, tc := range []struct {
		name    string
		binary  bool
		payload []byte
		want    bool
	}{
		{"text", false, []byte(`{"op":9,"d":false}`), true},
		{"compressed", true, z.Bytes(), true},
		{"other op", false, []byte(`{"op":11}`), false},
		{"dispatch that says op 9 inside", false, []byte(`{"op":0,"d":{"content":"\"op\":9"}}`), false},
		{"no op", false, []byte(`{"d":9}`), false},
		{"not json", false, []byte(`op 9`), false},
		{"binary not zlib", true, []byte(`{"op":9}`), false},
	} {
		if got := isInvalidSession(tc.binary, tc.payload); got != tc.want {
			t.Errorf("%s: isInvalidSession = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A wss gateway: the adapter makes the TLS connection itself, and the
// frames it reads in the clear are watched as on a ws one.
func TestInvalidSessionOverTLS(t *testing.T) {
	gate := &recordingGate{}
	up := websocket.Upgrader{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.WriteMessage(websocket.TextMessage, []byte(`{"op":9,"d":false}`))
		c.ReadMessage() // until the client closes
	}))
	defer srv.Close()
	a, err := New(Options{Token: "t", IdentifyGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	a.concurrency = 1
	a.mu.Unlock()
	a.invalidWait = func() time.Duration { return 0 }
	a.gatewayTLS = srv.Client().Transport.(*http.Transport).TLSClientConfig
	ws, _, err := a.s.Dialer.DialContext(testCtx(t), "wss://"+srv.Listener.Addr().String()+"/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, got, err := ws.ReadMessage(); err != nil || string(got) != `{"op":9,"d":false}` {
		t.Fatalf("read %q, %v", got, err)
	}
	if n := len(gate.taken()); n != 2 {
		t.Errorf("%d identify turns taken, want 2 (the dial's, and the one after INVALID_SESSION)", n)
	}
}
