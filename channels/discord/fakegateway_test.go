package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// fakeConn is one gateway websocket connection.
type fakeConn struct {
	ws     *websocket.Conn
	wake   chan struct{} // capacity 1: something to write
	done   chan struct{} // closed when the reader ended
	ctrl   [][]byte      // control frames to write first (guarded by fakeDiscord.mu)
	cursor int           // next index of the log to write (guarded by fakeDiscord.mu)
	live   bool          // identified or resumed: dispatches flow (guarded by fakeDiscord.mu)
	path   string        // the URL path the client connected to
	shard  int           // the shard it identified as (0 when unsharded)
}

func (c *fakeConn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// resumePath is where the fake's READY says to resume (resume_gateway_url):
// elsewhere than the gateway URL, as Discord's READY does.
const resumePath = "/resume-gateway"

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveGateway is the gateway websocket: HELLO, IDENTIFY → READY and
// GUILD_CREATE, RESUME → replay and RESUMED, heartbeats, dispatches.
func (f *fakeDiscord) serveGateway(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("v") != "9" || r.URL.Query().Get("encoding") != "json" {
		f.violate("gateway URL without v=9&encoding=json: %s", r.URL)
	}
	if f.resumeRefused(w, r) {
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &fakeConn{ws: ws, wake: make(chan struct{}, 1), done: make(chan struct{}), path: r.URL.Path}
	f.mu.Lock()
	f.conns[c] = true
	f.hellos++
	c.ctrl = append(c.ctrl, mustJSON(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 41250}}))
	f.changedLocked()
	f.mu.Unlock()
	closing := false // the client sent a close frame
	if f.pipes != nil {
		// In a synctest bubble: no close frame back, and the connection
		// stays until the client drops it. discordgo holds its lock
		// through the second it sleeps after its close frame, and its
		// reader would wait on that lock for an answer, which a bubble
		// never counts as waiting: time would stand still.
		ws.SetCloseHandler(func(int, string) error { closing = true; return nil })
	}
	var wg sync.WaitGroup
	wg.Go(func() { f.writeLoop(c) })
	f.readLoop(c)
	if closing {
		io.Copy(io.Discard, ws.UnderlyingConn())
	}
	close(c.done)
	ws.Close()
	wg.Wait()
	f.mu.Lock()
	delete(f.conns, c)
	if f.conn == c {
		f.conn = nil
	}
	f.changedLocked()
	f.mu.Unlock()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// writeLoop writes control frames and, once the connection is live, the
// session's dispatches from its cursor on.
func (f *fakeDiscord) writeLoop(c *fakeConn) {
	for {
		f.mu.Lock()
		var frame []byte
		switch {
		case len(c.ctrl) > 0:
			frame = c.ctrl[0]
			c.ctrl = c.ctrl[1:]
		case c.live:
			for frame == nil && c.cursor < len(f.log) {
				if f.forConnLocked(c, c.cursor) {
					frame = f.log[c.cursor]
				}
				c.cursor++
			}
		}
		f.mu.Unlock()
		if frame != nil {
			if err := c.ws.WriteMessage(websocket.TextMessage, frame); err != nil {
				return
			}
			continue
		}
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
	}
}

// readLoop reads the client's frames until the connection ends.
func (f *fakeDiscord) readLoop(c *fakeConn) {
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(data, &p) != nil {
			f.violate("gateway frame that is not JSON: %q", data)
			continue
		}
		switch p.Op {
		case 1:
			f.mu.Lock()
			f.heartbeats++
			c.ctrl = append(c.ctrl, []byte(`{"op":11}`))
			f.mu.Unlock()
			c.poke()
		case 2:
			if !f.identify(c, p.D) {
				return
			}
		case 6:
			f.resume(c, p.D)
		}
	}
}

// identify starts a new session on c: READY, GUILD_CREATE, then whatever
// was dispatched before anyone connected. It returns false when it closed
// the connection (a bad token or intents).
func (f *fakeDiscord) identify(c *fakeConn, raw json.RawMessage) bool {
	var d struct {
		Token   string        `json:"token"`
		Intents discordIntent `json:"intents"`
		Shard   *[2]int       `json:"shard"`
	}
	json.Unmarshal(raw, &d)
	closeWith := func(code int, text string) bool {
		// WriteControl, unlike WriteMessage, may run while writeLoop
		// writes (gorilla/websocket allows one writer otherwise).
		c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(5*time.Second))
		return false
	}
	if d.Token != f.token {
		return closeWith(4004, "Authentication failed.")
	}
	f.mu.Lock()
	if d.Intents&f.requireIntent != f.requireIntent {
		f.mu.Unlock()
		return closeWith(4014, "Disallowed intent(s).")
	}
	sharded := f.shards.count > 0
	if sharded {
		if msg := f.identifyShardLocked(c, d.Shard); msg != "" {
			f.mu.Unlock()
			return closeWith(4010, msg)
		}
	}
	f.identifies++
	f.intents = d.Intents
	if !sharded || f.session == "" {
		f.session = "session-" + f.newIDLocked()
		f.log, f.shards.to = nil, nil
	}
	for other := range f.conns {
		if other != c && other.shard == c.shard {
			other.live = false
		}
	}
	f.conn = c
	c.live = true
	c.cursor = len(f.log)
	f.shards.only = c // READY and GUILD_CREATE go to c alone
	f.appendLocked("READY", map[string]any{
		"v":                  9,
		"user":               userJSON(f.bot),
		"session_id":         f.session,
		"resume_gateway_url": "ws://" + f.addr + resumePath,
		"guilds":             []any{map[string]any{"id": f.guild, "unavailable": true}},
		"application":        map[string]any{"id": f.app, "flags": 0},
	})
	for _, guild := range append([]string{f.guild}, f.shards.guilds...) {
		if sharded && f.shardOfLocked(guild) != c.shard {
			continue
		}
		var chans, threads []any
		for _, ch := range f.chans {
			if ch.Guild != guild {
				continue
			}
			if ch.Type == 11 {
				threads = append(threads, channelJSON(ch))
			} else {
				chans = append(chans, channelJSON(ch))
			}
		}
		f.appendLocked("GUILD_CREATE", map[string]any{
			"id": guild, "name": "test guild", "channels": chans, "threads": threads,
			"members": []any{},
			"roles": []any{
				map[string]any{"id": guild, "name": "@everyone", "managed": false},
				map[string]any{"id": f.botRole, "name": f.bot.Name, "managed": true, "tags": map[string]any{"bot_id": f.bot.ID}},
				map[string]any{"id": "700000000000000901", "name": "otherbot", "managed": true, "tags": map[string]any{"bot_id": "900000000000000077"}},
			},
		})
	}
	f.shards.only = nil
	for _, p := range f.backlog {
		f.appendLocked(p.t, p.d)
	}
	f.backlog = nil
	f.changedLocked()
	f.mu.Unlock()
	c.poke()
	return true
}

// resume continues the session on c from the client's sequence number:
// the dispatches it missed, then RESUMED. An unknown session gets an
// INVALID_SESSION, and the client identifies anew.
func (f *fakeDiscord) resume(c *fakeConn, raw json.RawMessage) {
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int    `json:"seq"`
	}
	json.Unmarshal(raw, &d)
	f.mu.Lock()
	defer c.poke()
	defer f.mu.Unlock()
	if f.invalidateLocked(c) {
		return
	}
	if d.Token != f.token || d.SessionID != f.session || d.Seq < 0 || d.Seq > len(f.log) {
		f.violations = append(f.violations, fmt.Sprintf("RESUME of an unknown session %q at %d", d.SessionID, d.Seq))
		c.ctrl = append(c.ctrl, []byte(`{"op":9,"d":false}`))
		return
	}
	if strings.TrimSuffix(c.path, "/") != resumePath {
		f.violations = append(f.violations, fmt.Sprintf("RESUME at %s, not at the session's resume_gateway_url (%s)", c.path, resumePath))
	}
	f.resumes++
	if f.conn != nil && f.conn != c {
		f.conn.live = false
	}
	f.conn = c
	c.live = true
	c.cursor = max(d.Seq-f.replay, 0) // Discord replays what came after the client's seq
	f.replay = 0
	f.appendLocked("RESUMED", map[string]any{})
	f.changedLocked()
}

// dispatchLocked sends a dispatch: into the session's log (replayed on
// resume), or, before the first IDENTIFY, into the backlog.
func (f *fakeDiscord) dispatchLocked(t string, d any) {
	if f.session == "" {
		f.backlog = append(f.backlog, fakeDispatch{t, d})
		return
	}
	f.appendLocked(t, d)
}

func (f *fakeDiscord) appendLocked(t string, d any) {
	seq := len(f.log) + 1
	f.log = append(f.log, mustJSON(map[string]any{"op": 0, "t": t, "s": seq, "d": d}))
	if f.shards.count > 0 {
		f.routeLocked(d)
		return
	}
	if f.conn != nil && f.conn.live {
		f.conn.poke()
	}
}

// dropConnection closes the live gateway connection without a close frame,
// as a network failure would.
func (f *fakeDiscord) dropConnection() {
	f.mu.Lock()
	c := f.conn
	f.mu.Unlock()
	if c == nil {
		f.t.Fatal("fake discord: no gateway connection to drop")
	}
	c.ws.UnderlyingConn().Close()
}

// askReconnect sends RECONNECT (op 7) on the live connection.
func (f *fakeDiscord) askReconnect() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		f.t.Fatal("fake discord: no gateway connection to ask")
	}
	f.conn.ctrl = append(f.conn.ctrl, []byte(`{"op":7,"d":null}`))
	f.conn.poke()
}

// gatewayCounts returns how often clients identified and resumed.
func (f *fakeDiscord) gatewayCounts() (identifies, resumes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.identifies, f.resumes
}

// connected waits until a connection is live.
func (f *fakeDiscord) waitLive(ctx context.Context) {
	f.waitFor(ctx, "a live gateway connection", func() bool { return f.conn != nil && f.conn.live })
}
