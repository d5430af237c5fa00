package egress

import (
	"net"
	"testing"
	"testing/synctest"
)

// pipeListener accepts the server ends of net.Pipe connections the test
// hands it, counting the Accepts that reached it.
type pipeListener struct {
	conns   chan net.Conn
	reached int
}

func (l *pipeListener) Accept() (net.Conn, error) {
	l.reached++
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l *pipeListener) Close() error   { return nil }
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "unix"} }

// TestProxyServesAtMostMaxConns: a proxy's listener holds maxConns
// connections at once; the next is not even accepted until one of them
// closes.
func TestProxyServesAtMostMaxConns(t *testing.T) {
	x, _ := startProxy(t, Policy{Mode: "none"}, nil)
	if got := cap(x.ln.(*limitListener).sem); got != maxConns {
		t.Errorf("a proxy serves %d connections at once, want %d", got, maxConns)
	}
	synctest.Test(t, func(t *testing.T) {
		const limit = 3
		inner := &pipeListener{conns: make(chan net.Conn)}
		l := &limitListener{Listener: inner, sem: make(chan struct{}, limit), done: make(chan struct{})}
		accepted := make(chan net.Conn, limit+1)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
		var held []net.Conn
		for range limit {
			srv, cli := net.Pipe()
			defer cli.Close()
			inner.conns <- srv
			held = append(held, <-accepted)
		}
		synctest.Wait()
		if inner.reached != limit {
			t.Fatalf("with %d connections open the listener was asked for another (%d Accepts reached it)", limit, inner.reached)
		}
		held[0].Close()
		synctest.Wait()
		if inner.reached != limit+1 {
			t.Fatalf("after a connection closed %d Accepts reached the listener, want %d", inner.reached, limit+1)
		}
		l.Close()
		close(inner.conns)
		for _, c := range held[1:] {
			c.Close()
		}
	})
}
