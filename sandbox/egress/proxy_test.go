package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveText serves text on 127.0.0.1 (a fake model API, or a listener of
// the gateway's standing for the web chat, metrics or NATS) and returns
// host:port; each request's header is sent to seen when it is not nil.
func serveText(t *testing.T, text string, seen chan<- http.Header) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen <- r.Header.Clone()
		}
		io.WriteString(w, text)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// startProxy serves a Proxy for p on a socket in a new directory and
// returns it and the socket's path; the test ends it.
func startProxy(t *testing.T, p Policy, log *slog.Logger) (*Proxy, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "egress.sock")
	x, err := Listen(sock, p, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- x.Serve(context.Background()) }()
	t.Cleanup(func() {
		x.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve() = %v, want nil after Close", err)
		}
	})
	return x, sock
}

// proxyClient is an HTTP client whose proxy is the unix socket sock.
func proxyClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "egress.proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

// get GETs u through the client and returns "STATUS BODY".
func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return "error " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// tunnel sends CONNECT dest on the socket; on 200 it GETs / through the
// tunnel. It returns "STATUS BODY".
func tunnel(t *testing.T, sock, dest string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The GET is written at once with the CONNECT, as a client in a hurry
	// does with its TLS hello: the proxy must pass it on.
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", dest, dest, dest)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "error " + err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		return "error " + err.Error()
	}
	b, _ := io.ReadAll(inner.Body)
	return fmt.Sprintf("%d %s", inner.StatusCode, b)
}

// records is a slog handler that keeps its records' messages and attributes.
type records struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *records) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{r}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func (r *records) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

type lockedWriter struct{ r *records }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return w.r.buf.Write(b)
}

// TestProxy: a real client through the proxy's socket, CONNECT and
// absolute URIs, to an allowed loopback API and to a loopback listener
// that is not listed (the web chat, metrics, NATS of the host).
func TestProxy(t *testing.T) {
	api := serveText(t, "model-api", nil)
	web := serveText(t, "web-chat", nil)
	_, webPort, _ := net.SplitHostPort(web)
	var log records
	_, sock := startProxy(t, Policy{Mode: "full", Allow: []string{api}}, log.logger())
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket 0600", fi.Mode())
	}
	c := proxyClient(sock)
	for _, tc := range []struct{ name, got, want string }{
		{"absolute URI to the allowed API", get(t, c, "http://"+api+"/v1"), "200 model-api"},
		{"CONNECT to the allowed API", tunnel(t, sock, api), "200 model-api"},
		{"absolute URI to the web chat", get(t, c, "http://"+web+"/"), "403 egress refused " + web + ": a loopback address"},
		{"CONNECT to the web chat", tunnel(t, sock, web), "403 egress refused " + web + ": a loopback address"},
		{"CONNECT to localhost's web chat", tunnel(t, sock, "localhost:"+webPort), "403 egress refused localhost:" + webPort + ": resolves to"},
		{"CONNECT to the metadata address", tunnel(t, sock, "169.254.169.254:80"), "403 egress refused 169.254.169.254:80: a link-local address"},
		{"CONNECT to nothing", tunnel(t, sock, "no-port"), "403 egress refused no-port: not a host:port"},
		{"not a proxy request", get(t, &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return net.Dial("unix", sock)
		}}}, "http://egress.proxy/"), "400 egress: this is a proxy"},
	} {
		if !strings.HasPrefix(tc.got, tc.want) {
			t.Errorf("%s: got %q, want %q...", tc.name, tc.got, tc.want)
		}
	}
	// The web chat's refusal was logged once, though asked for twice.
	if n := strings.Count(log.String(), "dest="+web); n != 1 {
		t.Errorf("the refusal of %s is logged %d times, want once:\n%s", web, n, log.String())
	}
}

// TestProxyHopByHop: the upstream sees neither the proxy's own headers
// nor those the client named in Connection, and no X-Forwarded-For.
func TestProxyHopByHop(t *testing.T) {
	seen := make(chan http.Header, 1)
	api := serveText(t, "model-api", seen)
	_, sock := startProxy(t, Policy{Mode: "allow", Allow: []string{api}}, nil)
	req, _ := http.NewRequest("GET", "http://"+api+"/", nil)
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "1")
	req.Header.Set("X-Kept", "1")
	resp, err := proxyClient(sock).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := <-seen
	for _, k := range []string{"Proxy-Authorization", "X-Hop", "X-Forwarded-For", "Forwarded"} {
		if v := h.Get(k); v != "" {
			t.Errorf("upstream got %s: %q, want none", k, v)
		}
	}
	if h.Get("X-Kept") != "1" {
		t.Errorf("upstream got X-Kept %q, want 1", h.Get("X-Kept"))
	}
}

// echo serves a TCP echo on 127.0.0.1 and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// openTunnel opens a CONNECT tunnel to dest and checks it works.
func openTunnel(t *testing.T, sock, dest string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest)
	want := "HTTP/1.1 200 Connection established\r\n\r\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("CONNECT answer %q, %v; want %q", got, err, want)
	}
	fmt.Fprint(c, "ping")
	if _, err := io.ReadFull(c, got[:4]); err != nil || string(got[:4]) != "ping" {
		t.Fatalf("echo %q, %v", got[:4], err)
	}
	return c
}

// TestProxyCloseEndsTunnels: Close ends an open tunnel and Serve returns.
func TestProxyCloseEndsTunnels(t *testing.T) {
	e := echo(t)
	x, sock := startProxy(t, Policy{Mode: "allow", Allow: []string{e}}, nil)
	c := openTunnel(t, sock, e)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("tunnel read after Close: %v, want EOF", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after Close: %v, want it removed", err)
	}
}

// TestProxyIdleTunnel: a tunnel that carries nothing for the idle time
// ends.
func TestProxyIdleTunnel(t *testing.T) {
	e := echo(t)
	x, sock := startProxy(t, Policy{Mode: "allow", Allow: []string{e}}, nil)
	x.idle = 300 * time.Millisecond
	start := time.Now() // before: the proxy's idle clock starts as it opens the tunnel
	c := openTunnel(t, sock, e)
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("idle tunnel read: %v, want EOF", err)
	}
	if d := time.Since(start); d < x.idle {
		t.Errorf("the idle tunnel ended after %v, before its idle time %v", d, x.idle)
	}
}

func TestListenRefusesABadPolicyAndAFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Listen(filepath.Join(dir, "s"), Policy{Mode: "open"}, nil); err == nil || !strings.Contains(err.Error(), "mode: must be one of full allow none") {
		t.Errorf("Listen(bad mode) = %v", err)
	}
	long := filepath.Join(dir, strings.Repeat("s", 100))
	if _, err := Listen(long, Policy{Mode: "full"}, nil); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("Listen(a path too long for a socket) = %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep"), 0o600)
	if _, err := Listen(file, Policy{Mode: "full"}, nil); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen(over a file) = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the file is %q after Listen, want it kept", b)
	}
}
