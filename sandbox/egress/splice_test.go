package egress

import (
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// TestSpliceIdle: a tunnel that streams in one direction only (a model's
// long answer) stays open past the idle time; once nothing moves either
// way for the idle time, it ends.
func TestSpliceIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Second
		client, inner := net.Pipe()
		outer, upstream := net.Pipe()
		defer client.Close()
		defer upstream.Close()
		done := make(chan struct{})
		go func() {
			splice(inner, outer, idle)
			close(done)
		}()
		go func() {
			for range 10 {
				time.Sleep(idle * 4 / 10)
				if _, err := upstream.Write([]byte("x")); err != nil {
					return
				}
			}
		}()
		buf := make([]byte, 10)
		if _, err := io.ReadFull(client, buf); err != nil {
			t.Fatalf("read the stream: %v (the tunnel ended while upstream was still sending)", err)
		}
		last := time.Now()
		if n, err := client.Read(buf); err == nil {
			t.Fatalf("read %q after the stream, want the tunnel ended", buf[:n])
		}
		if d := time.Since(last); d < idle {
			t.Errorf("the tunnel ended %v after the last byte, want the idle time %v", d, idle)
		}
		<-done
	})
}
