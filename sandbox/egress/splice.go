package egress

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// splice copies bytes both ways between a and b until both directions
// end, then closes both. The end of one direction (EOF) is passed on as
// a half close where the connection has one. With idle > 0 the splice
// ends when neither direction has carried a byte for idle.
func splice(a, b net.Conn, idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var once sync.Once
	abort := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			if idle > 0 {
				src.SetReadDeadline(time.Now().Add(idle))
			}
			n, err := src.Read(buf)
			if n > 0 {
				last.Store(time.Now().UnixNano())
				if idle > 0 {
					dst.SetWriteDeadline(time.Now().Add(idle))
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					abort()
					return
				}
			}
			if err == nil {
				continue
			}
			if errors.Is(err, os.ErrDeadlineExceeded) && time.Since(time.Unix(0, last.Load())) < idle {
				continue // the other direction is busy
			}
			if cw, ok := dst.(interface{ CloseWrite() error }); ok && errors.Is(err, io.EOF) {
				if cw.CloseWrite() == nil {
					return
				}
			}
			abort()
			return
		}
	}
	wg.Go(func() { pipe(b, a) })
	wg.Go(func() { pipe(a, b) })
	wg.Wait()
	abort()
}
