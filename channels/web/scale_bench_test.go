package web

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pageWriter is an open page's stream: it counts the bytes written to it
// and reports the end of each turn of its thread (typing off).
type pageWriter struct {
	bytes *atomic.Int64
	ended chan struct{}
}

var typingOff = []byte("event: typing\ndata: {\"typing\":false}")

func (w pageWriter) Write(p []byte) (int, error) {
	w.bytes.Add(int64(len(p)))
	if bytes.HasPrefix(p, typingOff) {
		select {
		case w.ended <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// BenchmarkWebScale runs warm turns in n threads, each thread with one
// page open on its live stream (streamEvents, as the browser's stream),
// and reports per turn: the bytes written per open page, the gateway's
// CPU time (user and system, from getrusage), and the turn's end as its
// page sees it (p50, p99). A turn is what the gateway does for a short
// reply: the person's message, typing on, the reply drafted in four
// edits, typing off.
//
// With turns=serial, one turn runs at a time, in each thread in turn (500
// turns an op at least):
// what a turn costs with n threads and pages open, next to one thread.
// With turns=wave, every thread starts a turn at the same moment: a
// burst, whose CPU per turn is comparable, but whose latency is the
// burst's length (n turns' work on the machine's cores), not a turn's.
func BenchmarkWebScale(b *testing.B) {
	for _, n := range []int{1, 100, 500} {
		for _, wave := range []bool{false, true} {
			if n == 1 && wave {
				continue // the same as serial
			}
			mode := map[bool]string{false: "serial", true: "wave"}[wave]
			b.Run(fmt.Sprintf("threads=%d/turns=%s", n, mode), func(b *testing.B) { benchScale(b, n, wave) })
		}
	}
}

func benchScale(b *testing.B, n int, all bool) {
	st := newStore()
	st.maxInMemory = n // all in memory: this measures the streams
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var sent atomic.Int64
	ids := make([]string, n)
	ends := make([]chan struct{}, n)
	for i := range ids {
		ids[i] = st.mustCreate(fmt.Sprint("thread ", i)).ID
		st.addMessage(ids[i], message{Role: roleUser, Author: "ann", Kind: "text", Text: "earlier"})
	}
	for i, id := range ids {
		sub, snap, err := st.subscribe(id)
		if err != nil {
			b.Fatal(err)
		}
		ends[i] = make(chan struct{}, 1)
		w := pageWriter{bytes: &sent, ended: ends[i]}
		wg.Go(func() {
			defer st.unsubscribe(sub)
			streamEvents(ctx, nil, w, func() error { return nil }, sub, snap, time.Hour)
		})
	}
	reply := strings.Repeat("The build passes now; ", 8)
	turn := func(i int) time.Duration {
		start := time.Now()
		id := ids[i]
		st.addMessage(id, message{Role: roleUser, Author: "ann", Kind: "text", Text: "hello"})
		st.setTyping(id, true)
		m, _ := st.addMessage(id, message{Role: roleAssistant, Author: authorAgent, Kind: "text", Text: reply[:40]})
		for k := 2; k <= 4; k++ {
			st.editMessage(id, m.ID, "text", "", reply[:40*k])
		}
		st.setTyping(id, false)
		<-ends[i]
		return time.Since(start)
	}
	// Warm: every thread had a turn and every page its first state.
	var lat []time.Duration
	wave := func(record bool) {
		if !all {
			// At least 500 turns, for a p99 of as many as with 500
			// threads.
			for k := range max(n, 500) {
				d := turn(k % n)
				if record {
					lat = append(lat, d)
				}
			}
			return
		}
		var mu sync.Mutex
		var tw sync.WaitGroup
		for i := range ids {
			tw.Go(func() {
				d := turn(i)
				if record {
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		tw.Wait()
	}
	wave(false)
	sent.Store(0)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		wave(true)
	}
	b.StopTimer()
	turns := float64(len(lat))
	cpu := cpuTime() - cpu0
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(sent.Load())/turns/float64(n), "B/turn/page")
	b.ReportMetric(float64(cpu.Microseconds())/turns, "cpu-µs/turn")
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
