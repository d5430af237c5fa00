package discord

import (
	"context"
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
	// between, if set, is called whenever virtual time is about to pass.
	between func()
	// ended is set once the lane delivered the turn's end.
	ended bool
}

func newLaneDriver(t *testing.T, a *Adapter, th channels.ThreadRef, c *vclock) *laneDriver {
	d := &laneDriver{t: t, ctx: testCtx(t), clock: c, obs: &countObserver{}}
	d.lane = dispatch.NewLane(dispatch.Options{
		Adapter:   a,
		Thread:    th,
		Stream:    projector.DefaultSettings(),
		Typing:    typing.DefaultConfig(),
		Observer:  d.obs,
		OnTurnEnd: func(projector.TurnEnd) { d.ended = true },
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
		if d.between != nil {
			d.between()
		}
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
