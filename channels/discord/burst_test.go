package discord

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// pipeListener is a net.Listener of in-memory connections (net.Pipe):
// a server on it runs inside a synctest bubble, where time stands still
// until every goroutine waits, which a goroutine reading a TCP socket
// never counts as.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// pipeAddr is the fake's address on a pipeListener.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "discord.fake:80" }

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// dial connects to the listener's server.
func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newVirtualFake is newFake served in memory: call it inside a synctest
// bubble, whose clock is then the fake's too (limitRates(time.Now)).
func newVirtualFake(t *testing.T) *fakeDiscord {
	f, mux := buildFake(t)
	f.pipes = newPipeListener()
	f.srv = httptest.NewUnstartedServer(mux)
	f.srv.Listener.Close() // a TCP port it will not need
	f.srv.Listener = f.pipes
	f.srv.Start()
	f.addr = f.pipes.Addr().String()
	t.Cleanup(f.close)
	return f
}

// burst is what a burst of mentions came to.
type burst struct {
	mentions int
	answered int           // threads with the answer in them
	tooMany  int           // 429s the fake answered
	limited  []string      // what they were
	last     time.Duration // from the burst to the last answer
	floor    time.Duration // the least time Discord's limits allow for the requests made
	requests int           // requests under the global limit
	threads  int           // threads opened
	// told are the mentions told their place in the line (a Busy reply),
	// twice those told more than once, late those told after their
	// thread's answer came.
	told, twice, late int
}

// ratio is the time to the last answer against the floor.
func (b burst) ratio() float64 { return b.last.Seconds() / b.floor.Seconds() }

// mentionBurst makes n people mention the bot in one channel at once, with
// the fake holding Discord's limits (the global one included) on the
// clock now, and answers each thread that opens through the real dispatch
// lane (typing while the agent works, then the answer), as the gateway
// does. It waits until every mention has its answer, or until the
// answers stop coming for a minute. It runs inside a synctest bubble (on
// newVirtualFake) or in real time.
func mentionBurst(t testing.TB, f *fakeDiscord, n int, o Options) burst {
	t.Helper()
	f.limitRates(time.Now)
	f.limitGlobally()
	a := f.adapter(t, o)
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		runners []*dispatch.Runner
		wg      sync.WaitGroup
	)
	wg.Go(func() {
		err := a.Run(ctx, func(ctx context.Context, in channels.Inbound) {
			lane := dispatch.NewLane(dispatch.Options{
				Adapter: a, Thread: in.Thread, Stream: projector.DefaultSettings(), Typing: typing.DefaultConfig(),
			})
			r := dispatch.Start(ctx, lane)
			r.BeginTurn()
			r.Push(projector.Text{Text: "answer to " + in.Text}, projector.TurnEnd{StopReason: "end_turn"})
			mu.Lock()
			runners = append(runners, r)
			mu.Unlock()
		})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	f.waitLive(ctx)
	<-a.ready

	start := time.Now()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.say(ann, f.channel, fmt.Sprintf("question %d", i), true)
	}
	// answered counts the threads with their answer, and says when the
	// last one was posted.
	answered := func() (int, time.Time) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var got int
		var last time.Time
		for _, id := range ids {
			for _, m := range f.botMessagesLocked(id) {
				if strings.HasPrefix(m.Content, "answer to ") {
					got++
					last = later(last, m.Posted)
					break
				}
			}
		}
		return got, last
	}
	var b burst
	var last time.Time
	for progress := time.Now(); b.answered < n && time.Since(progress) < time.Minute; {
		time.Sleep(100 * time.Millisecond) // waiting until all are answered, or none for a minute
		if got, at := answered(); got > b.answered {
			b.answered, last, progress = got, at, time.Now()
		}
	}
	cancel()
	wg.Wait()
	mu.Lock()
	for _, r := range runners {
		r.Close()
	}
	mu.Unlock()

	b.mentions, b.tooMany, b.limited, b.last = n, f.tooManyRequests(), f.limitedRequests(), last.Sub(start)
	f.mu.Lock()
	for _, r := range f.requests {
		if !strings.HasPrefix(r.Path, "/interactions") && !strings.HasPrefix(r.Path, "/webhooks") && !strings.HasPrefix(r.Path, "/gateway") && !r.At.Before(start) {
			b.requests++
		}
	}
	f.mu.Unlock()
	b.threads = len(f.requestsMatching("POST", "/threads"))
	toldOf := map[string]int{}
	answerAt := map[string]time.Time{} // by mention: when its thread's answer came
	f.mu.Lock()
	for _, id := range ids {
		for _, m := range f.botMessagesLocked(id) {
			if strings.HasPrefix(m.Content, "answer to ") {
				answerAt[id] = m.Posted
				break
			}
		}
	}
	for _, m := range f.botMessagesLocked(f.channel) {
		if m.ReplyTo == "" || !strings.Contains(m.Content, "Busy: ") {
			continue
		}
		if toldOf[m.ReplyTo]++; toldOf[m.ReplyTo] == 2 {
			b.twice++
		}
		if ans := answerAt[m.ReplyTo]; !ans.IsZero() && m.Posted.After(ans) {
			b.late++
		}
	}
	f.mu.Unlock()
	b.told = len(toldOf)
	b.floor = max(time.Duration(b.requests)*time.Second/fakeGlobalLimit,
		time.Duration(b.threads)*fakeThreadsBucket.window/time.Duration(fakeThreadsBucket.limit))
	return b
}

// TestMentionBurstLosesNone: 500 people mention the bot in one channel at
// once, on a Discord with its own limits (50 requests a second in all, a
// bucket of threads per channel). Every mention gets its thread and its
// answer; Discord answers no request with 429, as the adapter counts the
// global limit itself and learns the thread bucket from the first
// thread's answer before it opens the next. In virtual time.
func TestMentionBurstLosesNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(channeltest.LeakCheck(t)) // after the fake's end
		f := newVirtualFake(t)
		b := mentionBurst(t, f, 500, Options{})
		if b.answered != b.mentions {
			t.Errorf("%d of %d mentions answered", b.answered, b.mentions)
		}
		if b.tooMany != 0 {
			t.Errorf("Discord answered %d requests with 429, want none; the first ones:\n%s", b.tooMany, strings.Join(b.limited[:min(10, len(b.limited))], "\n"))
		}
		if b.threads != b.mentions {
			t.Errorf("%d requests to open a thread for %d mentions, want one each", b.threads, b.mentions)
		}
		// The mentions that wait past busyAfter are told their place, as
		// the limits let replies through, never twice nor after their
		// answer.
		if b.told == 0 {
			t.Errorf("no mention was told its place in the line, with the last answer after %v", b.last)
		}
		if b.twice != 0 || b.late != 0 {
			t.Errorf("%d mentions told their place twice, %d after their answer; want none", b.twice, b.late)
		}
		t.Logf("%d mentions: last answer after %v, floor %v (%d requests, %d threads, %d told their place): %.2f× the floor",
			b.mentions, b.last, b.floor, b.requests, b.threads, b.told, b.ratio())
	})
}

// BenchmarkMentionBurst measures a burst of 200 mentions in one channel
// on the fake with Discord's limits, in real time over loopback (a
// benchmark cannot run in a synctest bubble: synctest.Test needs a
// *testing.T): the time to the last answer against the floor that the
// limits set for the requests made (x-floor; the goal is ≤ 1.2), and the
// answers and 429s. Run it with -benchtime=1x: one burst takes the
// floor's seconds (about 11 s).
func BenchmarkMentionBurst(b *testing.B) {
	for b.Loop() {
		f := newFake(b)
		r := mentionBurst(b, f, 200, Options{})
		b.ReportMetric(r.ratio(), "x-floor")
		b.ReportMetric(r.last.Seconds(), "s-to-last-answer")
		b.ReportMetric(r.floor.Seconds(), "s-floor")
		b.ReportMetric(float64(r.answered), "answered")
		b.ReportMetric(float64(r.tooMany), "429s")
	}
}
