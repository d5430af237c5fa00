package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// vclock is a virtual clock shared by a test, the adapter's rate limiter
// and the fake's rate limits. It is safe for concurrent use.
type vclock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newClock() *vclock { return &vclock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *vclock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// set moves the clock to t; it never goes back.
func (c *vclock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// withClock makes a's rate limiter read time from c.
func withClock(t *testing.T, a *Adapter, c *vclock) {
	t.Helper()
	tr, ok := a.s.Client.Transport.(*transport)
	if !ok {
		t.Fatalf("the adapter's transport is %T", a.s.Client.Transport)
	}
	tr.now = c.now
}

// laneDriver runs the real dispatch lane over the real adapter in virtual
// time, as a Runner would with real timers.
type laneDriver struct {
	t     *testing.T
	ctx   context.Context
	clock *vclock
	lane  *dispatch.Lane
	obs   *countObserver
	next  time.Time // when the lane asked to run again; zero: on the next Push
}

func newLaneDriver(t *testing.T, a *Adapter, th channels.ThreadRef, c *vclock) *laneDriver {
	d := &laneDriver{t: t, ctx: testCtx(t), clock: c, obs: &countObserver{}}
	d.lane = dispatch.NewLane(dispatch.Options{
		Adapter:  a,
		Thread:   th,
		Stream:   projector.DefaultSettings(),
		Typing:   typing.DefaultConfig(),
		Observer: d.obs,
	})
	return d
}

// step runs the lane now.
func (d *laneDriver) step() { d.next = d.lane.Step(d.ctx, d.clock.now()) }

// push queues outputs now and runs the lane.
func (d *laneDriver) push(outs ...projector.Output) {
	d.lane.Push(d.clock.now(), outs...)
	d.step()
}

// wait lets virtual time pass for dt, running the lane whenever it asked
// to.
func (d *laneDriver) wait(dt time.Duration) {
	d.t.Helper()
	until := d.clock.now().Add(dt)
	for range 100000 {
		if d.next.IsZero() || d.next.After(until) {
			d.clock.set(until)
			return
		}
		d.clock.set(d.next)
		d.step()
	}
	d.t.Fatal("the lane keeps asking to run at once")
}

// settle lets time pass until the lane has delivered everything.
func (d *laneDriver) settle() {
	d.t.Helper()
	for range 1000 {
		if d.lane.Idle() {
			return
		}
		d.wait(time.Second)
	}
	d.t.Fatal("the lane did not deliver everything within 1000 virtual seconds")
}

// countObserver counts the lane's deliveries and rate limits.
type countObserver struct {
	mu          sync.Mutex // guards the fields below
	delivered   map[string]int
	rateLimited int
}

func (o *countObserver) Delivered(op string, _ channels.Kind, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.delivered == nil {
		o.delivered = map[string]int{}
	}
	o.delivered[op]++
}

func (o *countObserver) RateLimited(string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rateLimited++
}

// TestLongAnswerDrawsNo429 streams a long answer with tool calls, each
// shown and then edited to its result, through the real dispatch lane and
// the adapter into the fake with Discord's limits: posts and edits share
// one bucket of five requests per five seconds in a channel. The adapter
// learns that from the responses and holds requests until the bucket
// refills, so Discord never answers 429, and nothing is lost.
func TestLongAnswerDrawsNo429(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	th := f.threadRef()
	d := newLaneDriver(t, a, th, clock)

	const rounds = 12
	var answer strings.Builder
	d.lane.BeginTurn(clock.now())
	d.step()
	for r := range rounds {
		// A paragraph streamed word by word, then a tool call that
		// runs for a while.
		for i, w := range strings.Fields(words(40 + r)) {
			chunk := w + " "
			if i == 0 && r > 0 {
				chunk = "\n\n" + chunk
			}
			answer.WriteString(chunk)
			d.push(projector.Text{Text: chunk})
			d.wait(60 * time.Millisecond)
		}
		id := projector.ToolCallID(fmt.Sprintf("call_%d", r))
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Run step %d · running", r), First: true})
		d.wait(700 * time.Millisecond)
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Run step %d · done", r)})
		d.wait(100 * time.Millisecond)
	}
	d.push(projector.TurnEnd{StopReason: "end_turn"})
	d.settle()

	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("Discord answered %d requests with 429; want none", n)
	}
	if d.obs.rateLimited == 0 {
		t.Error("the adapter never held a request back: the test did not reach Discord's limits")
	}
	if d.obs.delivered["edit"] == 0 {
		t.Error("no edit was delivered: the test did not mix posts and edits")
	}
	var tools, text []fakeMessage
	for _, m := range f.botMessages(f.thread) {
		if strings.HasPrefix(m.Content, "🛠️") {
			tools = append(tools, m)
		} else {
			text = append(text, m)
		}
	}
	if len(tools) != rounds {
		t.Errorf("%d tool messages, want one per tool call (%d)", len(tools), rounds)
	}
	for i, m := range tools {
		if want := fmt.Sprintf("🛠️ Run step %d · done", i); m.Content != want {
			t.Errorf("tool message %d = %q, want %q", i, m.Content, want)
		}
	}
	if got, want := answerText(text), strings.Join(strings.Fields(answer.String()), " "); got != want {
		t.Errorf("the answer in the thread is\n%s\nwant\n%s", got, want)
	}
}

// TestFirstEditAfterFivePosts: on a fresh adapter, an edit after five
// posts in a channel is held until the channel's message bucket refills,
// though the adapter has not yet seen which bucket edits belong to; it
// then goes through, and Discord never answers 429.
func TestFirstEditAfterFivePosts(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	ctx := testCtx(t)
	th := f.threadRef()
	var first channels.Handle
	for i := range 5 {
		h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("post %d", i)})
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if i == 0 {
			first = h
		}
		clock.set(clock.now().Add(100 * time.Millisecond))
	}
	err := a.Edit(ctx, first, channels.Message{Kind: channels.KindText, Text: "edited"})
	var rl *channels.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 4500*time.Millisecond {
		t.Fatalf("edit after five posts = %v, want a rate limit of 4.5 s", err)
	}
	if n := len(f.requestsMatching("PATCH", "/messages/")); n != 0 {
		t.Errorf("%d edits reached Discord while its bucket was exhausted", n)
	}
	clock.set(clock.now().Add(rl.RetryAfter))
	if err := a.Edit(ctx, first, channels.Message{Kind: channels.KindText, Text: "edited"}); err != nil {
		t.Fatalf("edit after the wait: %v", err)
	}
	if got, _ := f.content(string(first.ID)); got != "edited" {
		t.Errorf("message = %q, want %q", got, "edited")
	}
	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("Discord answered %d requests with 429; want none", n)
	}
}
