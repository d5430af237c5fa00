package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// handled is one event a worker's handler got.
type handled struct {
	worker string
	ev     cluster.Event
}

// worker is a Router with its own connection, as one worker process.
type worker struct {
	id     string
	conn   *nats.Conn // its own connection (closed: the process died)
	leases *cluster.Leases
	reg    *cluster.Registry
	router *cluster.Router
	lost   chan string // threads whose lease the router lost
	stop   func()      // stops the router and waits for it (once)
}

// startWorker runs a worker until the test ends; its handler reports to got.
func startWorker(t *testing.T, url, id string, ttl time.Duration, agents []string, load int, got chan<- handled) *worker {
	t.Helper()
	return startRouting(t, url, id, routing{ttl: ttl, agents: agents, load: func() int { return load },
		handle: func(_ context.Context, ev cluster.Event) error {
			got <- handled{id, ev}
			return nil
		}})
}

// routing is how startRouting's worker routes: its lease TTL, its agents,
// its load (nil: the threads it holds) and its handler.
type routing struct {
	ttl    time.Duration
	agents []string
	load   func() int
	handle cluster.Handler
	// keys and unsigned are the router's EdgeKeys and Unsigned; log,
	// if set, takes its records (else an error fails the test).
	keys     *cluster.EdgeKeys
	unsigned func(cluster.Event) bool
	log      *slog.Logger
}

// startRouting runs a worker routing as o says until the test ends.
func startRouting(t *testing.T, url, id string, o routing) *worker {
	t.Helper()
	nc, js := connect(t, url)
	ctx := ctxFor(t)
	w := &worker{id: id, conn: nc, leases: openLeases(t, js, id, o.ttl, 1), lost: make(chan string, 10)}
	reg, err := cluster.OpenRegistry(ctx, js, cluster.RegistryOptions{Cluster: "test", TTL: o.ttl})
	if err != nil {
		t.Fatal(err)
	}
	w.reg = reg
	in := openInbound(t, js)
	if o.log == nil {
		o.log = testlog.FailOnError(t)
	}
	w.router = cluster.NewRouter(cluster.RouterOptions{
		Cluster: "test", Conn: nc, Leases: w.leases, Registry: reg, Inbound: in,
		Agents: o.agents, Load: o.load,
		Retry:  20 * time.Millisecond,
		Lost:   func(thread string) { w.lost <- thread },
		Log:    o.log,
		Handle: o.handle,

		EdgeKeys: o.keys, Unsigned: o.unsigned,
	})
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.router.Run(rctx) }()
	w.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		reg.Close()
	})
	t.Cleanup(w.stop)
	return w
}

func openInbound(t testing.TB, js jetstream.JetStream) *cluster.Inbound {
	t.Helper()
	in, err := cluster.OpenInbound(ctxFor(t), js, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func receive(t *testing.T, got <-chan handled) handled {
	t.Helper()
	select {
	case h := <-got:
		return h
	case <-time.After(30 * time.Second):
		t.Fatal("no event handled within 30s")
		return handled{}
	}
}

// A redelivered event (the same Slack event_id) is dropped by the stream:
// the worker handles it once.
func TestInboundDuplicateDropped(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 10)
	startWorker(t, n.ClientURL(), "w1", time.Minute, nil, 0, got)
	_, js := connect(t, n.ClientURL())
	in := openInbound(t, js)
	ctx := ctxFor(t)
	for i, ev := range []cluster.Event{
		{ID: "slack:Ev1", Thread: "slack/T/C/1.0", Data: []byte("first")},
		{ID: "slack:Ev1", Thread: "slack/T/C/1.0", Data: []byte("first, redelivered")},
		{ID: "slack:Ev2", Thread: "slack/T/C/1.0", Data: []byte("second")},
	} {
		dup, err := in.Publish(ctx, ev)
		if err != nil || dup != (i == 1) {
			t.Fatalf("publish %d: duplicate=%v err=%v", i, dup, err)
		}
	}
	for _, want := range []string{"first", "second"} {
		if h := receive(t, got); string(h.ev.Data) != want {
			t.Fatalf("handled %q, want %q", h.ev.Data, want)
		}
	}
	select {
	case h := <-got:
		t.Fatalf("handled %q once more", h.ev.Data)
	default:
	}
}

// A thread nobody holds goes to the least loaded worker that can run its
// agent, whichever worker the stream delivered it to; its later events
// follow it there, in order.
func TestRouterPlacement(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 100)
	ws := []*worker{
		startWorker(t, n.ClientURL(), "busy", time.Minute, []string{"demo", "codex"}, 5, got),
		startWorker(t, n.ClientURL(), "demo1", time.Minute, []string{"demo"}, 0, got),
		startWorker(t, n.ClientURL(), "codex1", time.Minute, []string{"codex"}, 0, got),
	}
	ctx := ctxFor(t)
	for _, w := range ws {
		if err := w.reg.Await(ctx, func(all []cluster.WorkerInfo) bool { return len(all) == 3 }); err != nil {
			t.Fatal(err)
		}
	}
	_, js := connect(t, n.ClientURL())
	in := openInbound(t, js)
	want := map[string]string{"demo": "demo1", "codex": "codex1", "claude": "busy"}
	const threads, perThread = 6, 4
	for i := range perThread {
		for th := range threads {
			agent := []string{"demo", "codex", "claude"}[th%3]
			if agent == "claude" {
				agent = "" // any worker: still the least loaded
				if i == 0 {
					want[""] = ""
				}
			}
			ev := cluster.Event{ID: fmt.Sprintf("discord:%d-%d", th, i), Thread: thread(th), Agent: agent, Data: fmt.Appendf(nil, "%d", i)}
			if _, err := in.Publish(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := map[string]int{}
	lastSeq := map[string]uint64{}
	for range threads * perThread {
		h := receive(t, got)
		if w := want[h.ev.Agent]; w != "" && h.worker != w {
			t.Errorf("%s (agent %q) went to %s, want %s", h.ev.ID, h.ev.Agent, h.worker, w)
		}
		if h.ev.Agent == "" && h.worker == "busy" {
			t.Errorf("%s (any agent) went to the busiest worker", h.ev.ID)
		}
		if string(h.ev.Data) != fmt.Sprint(next[h.ev.Thread]) {
			t.Errorf("%s: event %s of its thread came after %d", h.ev.ID, h.ev.Data, next[h.ev.Thread])
		}
		next[h.ev.Thread]++
		if h.ev.Seq <= lastSeq[h.ev.Thread] {
			t.Errorf("%s: sequence %d after %d", h.ev.ID, h.ev.Seq, lastSeq[h.ev.Thread])
		}
		lastSeq[h.ev.Thread] = h.ev.Seq
		l, held, err := ws[0].leases.Holder(ctx, h.ev.Thread)
		if err != nil || !held || l.Owner != h.worker {
			t.Errorf("%s handled by %s, lease %+v held=%v err=%v", h.ev.ID, h.worker, l, held, err)
		}
	}
}

// A worker that died holding a thread loses it after the TTL; the thread's
// next event is then claimed and handled by a live worker.
func TestRouterDeadOwnerHandsOver(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	if _, err := openLeases(t, js, "dead", time.Second, 1).Claim(ctx, thread(3)); err != nil {
		t.Fatal(err)
	}
	got := make(chan handled, 10)
	live := startWorker(t, n.ClientURL(), "live", time.Second, nil, 0, got)
	if _, err := openInbound(t, js).Publish(ctx, cluster.Event{ID: "discord:42", Thread: thread(3), Data: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); h.worker != "live" || string(h.ev.Data) != "hello" {
		t.Fatalf("handled %+v", h)
	}
	if l, _, _ := live.leases.Holder(ctx, thread(3)); l.Owner != "live" {
		t.Fatalf("lease %+v, want live's", l)
	}
	if got := live.router.Owned(); len(got) != 1 || got[0] != thread(3) {
		t.Fatalf("live owns %v", got)
	}
}

// A worker whose lease was taken from it (it expired while the worker was
// cut off, and was claimed elsewhere) is told at its next renewal, and
// stops counting the thread as its own.
func TestRouterToldOfLostLease(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 10)
	w := startWorker(t, n.ClientURL(), "w1", 300*time.Millisecond, nil, 0, got)
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	if _, err := openInbound(t, js).Publish(ctx, cluster.Event{ID: "web:1", Thread: thread(5)}); err != nil {
		t.Fatal(err)
	}
	receive(t, got)
	other := openLeases(t, js, "w2", 300*time.Millisecond, 1)
	h, held, err := other.Holder(ctx, thread(5))
	if err != nil || !held || h.Owner != "w1" {
		t.Fatalf("holder %+v %v %v", h, held, err)
	}
	if err := other.Release(ctx, h); err != nil { // as if it had expired
		t.Fatal(err)
	}
	if _, err := other.Claim(ctx, thread(5)); err != nil {
		t.Fatal(err)
	}
	select {
	case th := <-w.lost:
		if th != thread(5) {
			t.Fatalf("lost %q", th)
		}
	case <-ctx.Done():
		t.Fatal("the worker was not told it lost the thread")
	}
	if owned := w.router.Owned(); len(owned) != 0 {
		t.Fatalf("still owns %v", owned)
	}
}

// A worker that stops (drains) withdraws from placement and releases its
// threads at once, instead of after the TTL.
func TestRouterReleasesOnStop(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 10)
	w := startWorker(t, n.ClientURL(), "w1", time.Hour, []string{"demo"}, 0, got)
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	if _, err := openInbound(t, js).Publish(ctx, cluster.Event{ID: "web:1", Thread: thread(8), Agent: "demo"}); err != nil {
		t.Fatal(err)
	}
	receive(t, got)
	if _, held, _ := w.leases.Holder(ctx, thread(8)); !held {
		t.Fatal("not held while the worker runs")
	}
	reg, err := cluster.OpenRegistry(ctx, js, cluster.RegistryOptions{Cluster: "test", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	w.stop()
	if _, held, err := w.leases.Holder(ctx, thread(8)); held || err != nil {
		t.Fatalf("still held after the worker stopped (err %v)", err)
	}
	if err := reg.Await(ctx, func(ws []cluster.WorkerInfo) bool { return len(ws) == 0 }); err != nil {
		t.Fatalf("the stopped worker is still announced: %v", reg.Workers())
	}
}

// A draining worker (StopClaiming) takes no new thread, which goes to
// another worker, and keeps renewing the leases it holds, so that its
// running turns finish there; stopping it then releases them.
func TestRouterStopClaimingKeepsLeases(t *testing.T) {
	n := startNode(t, t.TempDir())
	got := make(chan handled, 10)
	const ttl = 600 * time.Millisecond
	w1 := startWorker(t, n.ClientURL(), "w1", ttl, nil, 0, got)
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	in := openInbound(t, js)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:1", Thread: thread(1)}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); h.worker != "w1" {
		t.Fatalf("handled by %s", h.worker)
	}
	kv, err := js.KeyValue(ctx, "test_leases")
	if err != nil {
		t.Fatal(err)
	}
	watch, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	w1.router.StopClaiming()
	if err := w1.reg.Await(ctx, func(ws []cluster.WorkerInfo) bool { return len(ws) == 0 }); err != nil {
		t.Fatalf("the draining worker is still announced: %v", w1.reg.Workers())
	}
	startWorker(t, n.ClientURL(), "w2", ttl, nil, 0, got)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:2", Thread: thread(2)}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); h.worker != "w2" || h.ev.Thread != thread(2) {
		t.Fatalf("a new thread went to %s (%s), want w2 while w1 drains", h.worker, h.ev.Thread)
	}
	// Renewals by w1 go on across more than a TTL.
	for renewals := 0; renewals < 4; {
		select {
		case e := <-watch.Updates():
			if e != nil && e.Operation() == jetstream.KeyValuePut && strings.Contains(string(e.Value()), `"w1"`) {
				renewals++
			}
		case <-ctx.Done():
			t.Fatal("the draining worker stopped renewing its lease")
		}
	}
	if h, held, err := w1.leases.Holder(ctx, thread(1)); err != nil || !held || h.Owner != "w1" {
		t.Fatalf("thread 1 held by %+v (%v, %v), want still w1 while it drains", h, held, err)
	}
	w1.stop()
	if _, held, err := w1.leases.Holder(ctx, thread(1)); held || err != nil {
		t.Fatalf("still held after the drained worker stopped (err %v)", err)
	}
}

// An owner slower than the ack wait to take an event (a thread taken over
// edits what the worker before it left open first) keeps the event its
// own: the stream does not deliver it again, to be forwarded back to the
// owner and taken twice; the next event of the partition comes once the
// slow one was taken.
func TestRouterSlowOwnerTakesAnEventOnce(t *testing.T) {
	const wait = 2 * time.Second
	ticks := make(chan struct{}, 100)
	cluster.SetAckWait(t, wait, func() { ticks <- struct{}{} })
	n := startNode(t, t.TempDir())
	got := make(chan handled, 10)
	var (
		mu    sync.Mutex
		begun = map[string]int{}
	)
	twice := make(chan string, 10) // events whose handling began again
	began := make(chan struct{}, 10)
	slow := func(id string) cluster.Handler {
		return func(ctx context.Context, ev cluster.Event) error {
			mu.Lock()
			begun[ev.ID]++
			if begun[ev.ID] > 1 {
				twice <- ev.ID
			}
			mu.Unlock()
			if ev.ID == "web:slow" {
				began <- struct{}{}
				// Slower than the ack wait: more of its words than fit
				// in it, unless the event came again meanwhile.
				for range 5 {
					select {
					case <-ticks:
					case again := <-twice:
						t.Errorf("%s handled again while the slow event was still being taken", again)
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			got <- handled{id, ev}
			return nil
		}
	}
	// w1 alone takes the slow event from the stream (it is its owner);
	// w2 is there to take it should the stream deliver it again.
	ctx := ctxFor(t)
	w1 := startRouting(t, n.ClientURL(), "w1", routing{ttl: time.Minute, handle: slow("w1")})
	<-w1.router.Ready()
	_, js := connect(t, n.ClientURL())
	in := openInbound(t, js)
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:slow", Thread: thread(4)}); err != nil {
		t.Fatal(err)
	}
	<-began
	w2 := startRouting(t, n.ClientURL(), "w2", routing{ttl: time.Minute, handle: slow("w2")})
	<-w2.router.Ready()
	if _, err := in.Publish(ctx, cluster.Event{ID: "web:next", Thread: thread(4)}); err != nil {
		t.Fatal(err)
	}
	first, second := receive(t, got), receive(t, got)
	if first.ev.ID != "web:slow" || second.ev.ID != "web:next" || first.worker != second.worker {
		t.Fatalf("handled %s by %s, then %s by %s", first.ev.ID, first.worker, second.ev.ID, second.worker)
	}
	select {
	case id := <-twice:
		t.Fatalf("%s handled twice", id)
	default:
	}
}
