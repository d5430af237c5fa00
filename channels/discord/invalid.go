package discord

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// After an INVALID_SESSION (op 9) Discord asks a client to wait a random
// 1 to 5 s before it identifies, and that identify counts against the
// bot's identify limit like any other. discordgo v0.29.0 answers op 9 with
// an IDENTIFY on the same connection at once, from inside its reader, and
// gives no hook before it: the identify neither waits nor takes its turn
// (identifyTurn runs only before a dial). Closing the connection instead
// would not help, since discordgo keeps the refused session and would
// RESUME it again on the next dial. So the adapter watches the frames
// Discord sends on the gateway connection, below discordgo: a small
// parser of the server's websocket frames (which are never masked) passes
// every byte on unchanged, and holds an op 9 frame back until the wait is
// over and the identify's turn is taken (invalidSessionTurn); discordgo
// then reads it and identifies, late enough. The parser has to see the
// frames in the clear, so the adapter makes the TLS connection of a wss
// gateway itself (Dialer.NetDialTLSContext), through the environment's
// HTTP proxy where one is set, as the websocket library would.

// Bounds of the wait before the identify that answers an op 9.
const (
	minInvalidWait = time.Second
	maxInvalidWait = 5 * time.Second
)

// maxWatchedFrame is the largest frame the watcher reads whole to see
// whether it is an op 9 (which is a few dozen bytes); larger ones pass
// through as they come.
const maxWatchedFrame = 4 << 10

// invalidWait returns how long to wait before the identify that answers
// an op 9: a random time from 1 to 5 s.
func invalidWait() time.Duration {
	return minInvalidWait + rand.N(maxInvalidWait-minInvalidWait+1)
}

// invalidSessionTurn waits, once Discord said the session is invalid, the
// time it asks for and then the turn of the identify discordgo sends
// next, as every identify does (identifyTurn).
func (a *Adapter) invalidSessionTurn(ctx context.Context) error {
	wait := a.invalidWait()
	a.log.Info("discord: the gateway invalidated the session; identifying anew", "in", wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	return a.takeIdentifyTurn(ctx)
}

// watched returns c, the gateway connection in the clear, with the frames
// it reads watched for op 9: hold runs before one is read.
func (a *Adapter) watched(ctx context.Context, c net.Conn) net.Conn {
	return &watchConn{Conn: c, br: bufio.NewReader(c), hold: func() error { return a.invalidSessionTurn(ctx) }}
}

// watchConn is a client's websocket connection whose reads pass the
// server's bytes on unchanged: the HTTP responses of the handshake (a
// proxy's, then the upgrade's), then frame by frame, each small text or
// binary frame read whole first, and one that is an op 9 only after hold
// returned. It is used by one reader at a time (the websocket library's).
type watchConn struct {
	net.Conn
	br   *bufio.Reader
	hold func() error

	upgraded bool   // the upgrade's response was read: frames follow
	midLine  bool   // the handshake's last read ended inside a line
	switched bool   // the response being read is the upgrade's (101)
	out      []byte // bytes read and checked, to hand out
	rest     int64  // bytes of the current frame to pass on unread
}

func (c *watchConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.rest > 0 {
			n, err := c.br.Read(p[:min(int64(len(p)), c.rest)])
			c.rest -= int64(n)
			return n, err
		}
		var err error
		if !c.upgraded {
			err = c.handshake()
		} else {
			err = c.frame()
		}
		if err != nil && len(c.out) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// handshake reads a line of the HTTP responses before the frames.
func (c *watchConn) handshake() error {
	line, err := c.br.ReadSlice('\n')
	c.out = append(c.out[:0], line...)
	start := !c.midLine
	c.midLine = errors.Is(err, bufio.ErrBufferFull)
	if c.midLine {
		return nil
	}
	switch {
	case start && bytes.HasPrefix(line, []byte("HTTP/")):
		f := strings.Fields(string(line))
		c.switched = len(f) > 1 && f[1] == "101"
	case start && string(line) == "\r\n" && c.switched:
		c.upgraded = true
	}
	return err
}

// frame reads the next frame's header, and the frame whole when it is
// small enough to be an op 9.
func (c *watchConn) frame() error {
	h := make([]byte, 2, 14)
	if _, err := io.ReadFull(c.br, h); err != nil {
		return err
	}
	size, ext := int64(h[1]&0x7f), 0
	switch size {
	case 126:
		ext = 2
	case 127:
		ext = 8
	}
	masked := h[1]&0x80 != 0
	more := ext
	if masked {
		more += 4
	}
	h = h[:2+more]
	if _, err := io.ReadFull(c.br, h[2:]); err != nil {
		return err
	}
	switch ext {
	case 2:
		size = int64(binary.BigEndian.Uint16(h[2:4]))
	case 8:
		size = int64(binary.BigEndian.Uint64(h[2:10]) & (1<<63 - 1))
	}
	fin, op := h[0]&0x80 != 0, h[0]&0x0f
	if !fin || masked || (op != 1 && op != 2) || size > maxWatchedFrame {
		c.out, c.rest = h, size
		return nil
	}
	f := make([]byte, len(h)+int(size))
	copy(f, h)
	if _, err := io.ReadFull(c.br, f[len(h):]); err != nil {
		return err
	}
	if isInvalidSession(op == 2, f[len(h):]) {
		if err := c.hold(); err != nil {
			return err
		}
	}
	c.out = f
	return nil
}

// isInvalidSession reports whether a frame's payload is an op 9: JSON, or
// zlib-compressed JSON in a binary frame (discordgo asks for compressed
// payloads).
func isInvalidSession(binary bool, payload []byte) bool {
	if binary {
		z, err := zlib.NewReader(bytes.NewReader(payload))
		if err != nil {
			return false
		}
		defer z.Close()
		if payload, err = io.ReadAll(io.LimitReader(z, 64<<10)); err != nil {
			return false
		}
	}
	var p struct {
		Op *int `json:"op"`
	}
	return json.Unmarshal(payload, &p) == nil && p.Op != nil && *p.Op == 9
}

// dialWebsocketTLS opens a wss gateway connection: TCP as dialWebsocket
// (through the proxy the environment names for it, with CONNECT), then
// TLS, then the watch for op 9.
func (a *Adapter) dialWebsocketTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("discord: gateway address %q: %w", addr, err)
	}
	proxy, err := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "https", Host: addr}})
	if err != nil {
		return nil, fmt.Errorf("discord: the proxy for the gateway: %w", err)
	}
	to := addr
	if proxy != nil {
		to = proxy.Host
		if proxy.Port() == "" {
			to = net.JoinHostPort(proxy.Hostname(), "80")
		}
	}
	c, err := a.dialGateway(ctx, network, to)
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		if err := connect(ctx, c, proxy, addr); err != nil {
			c.Close()
			return nil, err
		}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.gatewayTLS != nil {
		cfg = a.gatewayTLS.Clone()
	}
	cfg.ServerName = host
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("discord: TLS with the gateway: %w", err)
	}
	return a.watched(a.runContext(), tc), nil
}

// connect asks the HTTP proxy on c for a tunnel to addr.
func connect(ctx context.Context, c net.Conn, proxy *url.URL, addr string) error {
	if proxy.Scheme != "http" {
		return fmt.Errorf("discord: proxy %s: only http proxies are supported for the gateway", proxy.Redacted())
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if u := proxy.User; u != nil {
		if pw, ok := u.Password(); ok {
			req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
		defer c.SetDeadline(time.Time{})
	}
	if err := req.Write(c); err != nil {
		return fmt.Errorf("discord: proxy %s: %w", proxy.Redacted(), err)
	}
	// The gateway says nothing before the TLS handshake: nothing is
	// buffered past the response.
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return fmt.Errorf("discord: proxy %s: %w", proxy.Redacted(), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("discord: proxy %s refused the tunnel to the gateway: %s", proxy.Redacted(), resp.Status)
	}
	return nil
}
