package egress

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Limits of one Proxy (one agent).
const (
	// maxConns bounds the connections a proxy serves at once (tunnels
	// and plain requests); more wait to be accepted.
	maxConns = 256
	// tunnelIdle ends a tunnel when neither side has sent a byte for so
	// long (a model that thinks a long time still streams something).
	tunnelIdle = 15 * time.Minute
	// dialTimeout bounds the connection to one destination.
	dialTimeout = 30 * time.Second
	// maxLogged bounds the destinations whose refusal is logged once.
	maxLogged = 1024
)

// Proxy is the host side: an HTTP proxy (CONNECT, and absolute-URI requests
// for http://) served on a unix socket (made 0600), deciding each
// destination by its Policy after resolving the name (so that a name that
// resolves to a loopback address is refused like the address).
type Proxy struct {
	path  string
	ln    net.Listener
	d     *decider
	log   *slog.Logger
	srv   *http.Server
	rp    *httputil.ReverseProxy
	tr    *http.Transport
	idle  time.Duration // tunnelIdle; tests shorten it
	close sync.Once

	mu      sync.Mutex        // guards the fields below
	tunnels map[net.Conn]bool // tunnels' and upstream connections
	logged  map[string]bool
	closed  bool

	wg sync.WaitGroup // the requests being served (tunnels too)
}

// Listen validates p and listens on socketPath (a stale socket there is
// replaced). The socket is made 0600 before it gets its name, so nobody
// connects in between. Serve starts serving.
func Listen(socketPath string, p Policy, log *slog.Logger) (*Proxy, error) {
	d, err := newDecider(p)
	if err != nil {
		return nil, fmt.Errorf("egress policy: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A unix socket's path has at most 107 bytes; the temporary name is
	// no longer than 9 bytes beside it.
	if len(socketPath) > 107-9 {
		return nil, fmt.Errorf("egress proxy: the socket path %s is longer than %d bytes", socketPath, 107-9)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(socketPath), "."+hex.EncodeToString(rnd[:]))
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if fi, err := os.Lstat(socketPath); err == nil && fi.Mode()&os.ModeSocket == 0 {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("egress proxy: %s exists and is not a socket", socketPath)
	}
	if err := os.Rename(tmp, socketPath); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	x := &Proxy{
		path:    socketPath,
		ln:      &limitListener{Listener: ln, sem: make(chan struct{}, maxConns), done: make(chan struct{})},
		d:       d,
		log:     log.With("socket", socketPath),
		idle:    tunnelIdle,
		tunnels: map[net.Conn]bool{},
		logged:  map[string]bool{},
	}
	x.tr = &http.Transport{
		Proxy:                 nil,
		DialContext:           x.dialHTTP,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute,
		DisableCompression:    true,
	}
	x.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.Host = "" // the URL's host, the one that was checked
		},
		Transport:    x.tr,
		ErrorHandler: x.httpError,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	x.srv = &http.Server{
		Handler:           x,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return x, nil
}

// Serve serves the proxy until ctx is done or Close; it returns once
// every connection has ended.
func (x *Proxy) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { x.Close() })
	defer stop()
	err := x.srv.Serve(x.ln)
	x.Close()
	x.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Close stops the proxy: the socket is removed, and every connection and
// tunnel is closed.
func (x *Proxy) Close() error {
	var err error
	x.close.Do(func() {
		err = x.srv.Close()
		x.tr.CloseIdleConnections()
		x.mu.Lock()
		x.closed = true
		var cs []net.Conn
		for c := range x.tunnels {
			cs = append(cs, c)
		}
		x.mu.Unlock()
		for _, c := range cs {
			c.Close()
		}
		if rerr := os.Remove(x.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	})
	return err
}

// ServeHTTP serves one proxy request: CONNECT, or an absolute http:// URI.
func (x *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !x.enter() {
		http.Error(w, "egress: the proxy is closing", http.StatusServiceUnavailable)
		return
	}
	defer x.wg.Done()
	if r.Method == http.MethodConnect {
		x.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "egress: this is a proxy: send CONNECT host:port, or a request for an absolute http:// URL", http.StatusBadRequest)
		return
	}
	x.rp.ServeHTTP(w, r)
}

// connect serves CONNECT host:port: it decides, dials, answers 200 and
// splices.
func (x *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	up, err := x.dial(r.Context(), r.Host)
	if err != nil {
		x.httpError(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "egress: cannot tunnel here", http.StatusInternalServerError)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !x.track(c) {
		c.Close()
		up.Close()
		return
	}
	defer x.untrack(c, up)
	if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	// What the client sent after its request (a TLS hello) is buffered.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(c, up, x.idle)
}

// enter counts a request in, so that Serve waits for it; it reports
// false when the proxy is closed.
func (x *Proxy) enter() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false
	}
	x.wg.Add(1)
	return true
}

// track records connections so that Close ends them; it reports false
// when the proxy is closed.
func (x *Proxy) track(cs ...net.Conn) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false
	}
	for _, c := range cs {
		x.tunnels[c] = true
	}
	return true
}

// untrack closes and forgets connections.
func (x *Proxy) untrack(cs ...net.Conn) {
	x.mu.Lock()
	for _, c := range cs {
		delete(x.tunnels, c)
	}
	x.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

// dialHTTP is the plain requests' transport's dialer.
func (x *Proxy) dialHTTP(ctx context.Context, network, addr string) (net.Conn, error) {
	return x.dial(ctx, addr)
}

// dial decides hostport and connects to the first of its checked
// addresses that answers.
func (x *Proxy) dial(ctx context.Context, hostport string) (net.Conn, error) {
	addrs, err := x.d.decide(ctx, hostport)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var dl net.Dialer
	var errs []error
	for _, ap := range addrs {
		c, err := dl.DialContext(ctx, "tcp", ap.String())
		if err == nil {
			x.log.Debug("egress connect", "dest", hostport, "addr", ap)
			tc := &trackedConn{Conn: c, x: x}
			if !x.track(tc) {
				c.Close()
				return nil, errors.New("egress: the proxy is closing")
			}
			return tc, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("connect %s: %w", hostport, errors.Join(errs...))
}

// httpError answers a failed request: 403 for a refusal (logged once per
// destination), 502 otherwise.
func (x *Proxy) httpError(w http.ResponseWriter, r *http.Request, err error) {
	var ref *Refusal
	if errors.As(err, &ref) {
		x.refused(ref)
		http.Error(w, ref.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "egress: "+err.Error(), http.StatusBadGateway)
}

// refused logs a refusal, once per destination.
func (x *Proxy) refused(ref *Refusal) {
	x.mu.Lock()
	first := !x.logged[ref.Dest] && len(x.logged) < maxLogged
	if first {
		x.logged[ref.Dest] = true
	}
	x.mu.Unlock()
	if first {
		x.log.Warn("egress refused a destination of the sandboxed agent", "dest", ref.Dest, "reason", ref.Reason)
	}
}

// limitListener accepts at most cap(sem) connections at once.
type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// trackedConn is an upstream connection, forgotten by its proxy once closed.
type trackedConn struct {
	net.Conn
	x    *Proxy
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.x.mu.Lock()
		delete(c.x.tunnels, c)
		c.x.mu.Unlock()
	})
	return c.Conn.Close()
}

// CloseWrite half-closes the connection.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// limitConn gives its slot back when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// CloseWrite half-closes the connection where it can be.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
