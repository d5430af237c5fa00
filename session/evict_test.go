package session_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// bareGateway is a router with a recording web channel and no agent, in
// a synctest bubble: messages that need no agent (a stop) touch threads.
type bareGateway struct {
	r      *session.Router
	rec    *channeltest.Recorder
	st     *store.Store
	cancel context.CancelFunc
	done   chan struct{}
}

func newBareGateway(t testing.TB, evictAfter time.Duration) *bareGateway {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	r := session.New(session.Options{
		Store:   st,
		Open:    []string{"web"},
		Agent:   func(string) (agent.Spec, bool) { return agent.Spec{}, false },
		Threads: session.Threads{EvictAfter: evictAfter},
	})
	r.Add("web", rec.Adapter())
	g := &bareGateway{r: r, rec: rec, st: st, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(g.done)
		_ = r.Run(ctx)
	}()
	return g
}

// touch sends a stop to thread i: it comes to life and says nothing runs.
func (g *bareGateway) touch(i int) {
	g.r.Handle(context.Background(), channels.Inbound{Thread: g.rec.Thread(fmt.Sprint("t", i)), Author: ann, Text: "stop"})
}

func (g *bareGateway) close() {
	g.cancel()
	<-g.done
	g.st.Close()
}

// TestIdleThreadsAreEvicted: 10,000 threads touched once leave memory
// after threads.evictAfter, goroutines and all. (They are touched 250 a
// virtual minute, so that no more than about 3,000 live at once: the race
// detector allows 8,128 goroutines.)
func TestIdleThreadsAreEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newBareGateway(t, 10*time.Minute)
		defer g.close()
		synctest.Wait()
		before := bubbleGoroutines()
		const n, perMinute = 10000, 250
		peak := 0
		for i := range n {
			g.touch(i)
			if (i+1)%perMinute == 0 {
				synctest.Wait()
				peak = max(peak, g.r.Threads())
				time.Sleep(time.Minute)
			}
		}
		if peak < 10*perMinute {
			t.Errorf("at most %d threads were in memory at once, want at least %d (none evicted before evictAfter)", peak, 10*perMinute)
		}
		time.Sleep(10*time.Minute + time.Second)
		synctest.Wait()
		if got := g.r.Threads(); got != 0 {
			t.Errorf("%d threads still in memory after evictAfter", got)
		}
		if got := bubbleGoroutines(); got != before {
			t.Errorf("%d goroutines, %d before the threads were touched", got, before)
		}
		told := 0
		for _, op := range g.rec.Ops() {
			if op.Op == "send" && strings.Contains(op.Text, "Nothing is running.") {
				told++
			}
		}
		if told != n {
			t.Errorf("%d threads were told nothing runs, want %d", told, n)
		}
	})
}

// bubbleGoroutines counts the goroutines of the calling synctest bubble
// (those of other tests, still ending, are not counted).
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for line := range strings.Lines(string(buf)) {
		if strings.HasPrefix(line, "goroutine ") && strings.Contains(line, "synctest bubble") {
			count++
		}
	}
	return count
}

// TestEvictedThreadComesBack: a thread evicted after its agent was
// reaped resumes its session from the store on its next message.
func TestEvictedThreadComesBack(t *testing.T) {
	e := newEnv(t, envOptions{
		rec:     channeltest.Options{Edit: true},
		limits:  session.Limits{IdleTimeout: 50 * time.Millisecond},
		threads: session.Threads{EvictAfter: 50 * time.Millisecond},
	})
	th := e.rec.Thread("evicted")
	e.say(th, ann, "echo one")
	e.waitEnd(th)
	e.waitAgent(th, "stopped")
	e.logs.waitFor(t, e.ctx(), "idle thread evicted")
	if n := e.r.Threads(); n != 0 {
		t.Fatalf("%d threads in memory after the eviction", n)
	}
	e.say(th, ann, "echo two")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn after the eviction: %+v", end)
	}
	if got := e.text(th); !strings.HasSuffix(got, "two") {
		t.Errorf("text %q, want the answer to the message after the eviction", got)
	}
	b, _, _ := e.st.Binding(e.ctx(), th)
	e.close()
	log := eventLog(t, e.dir, b.SessionID)
	if !strings.Contains(log, `"method":"session/resume"`) {
		t.Errorf("the thread did not resume its session after the eviction; event log:\n%s", log)
	}
}

// BenchmarkIdleThread reports the memory one idle thread holds while it
// is in memory (threads.evictAfter bounds how long).
func BenchmarkIdleThread(b *testing.B) {
	g := newBareGateway(b, 0)
	defer g.close()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	n := 0
	for b.Loop() {
		g.touch(n)
		n++
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if got := g.r.Threads(); got != n {
		b.Fatalf("%d threads in memory, want %d", got, n)
	}
	b.ReportMetric(float64(m1.HeapInuse+m1.StackInuse-m0.HeapInuse-m0.StackInuse)/float64(n), "bytes/thread")
}
