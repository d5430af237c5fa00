package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler takes an event of a thread this worker owns. It should hand the
// event on (to the thread's machine) and return: an error has the event
// delivered again later.
type Handler func(ctx context.Context, ev Event) error

// RouterOptions configure a Router.
type RouterOptions struct {
	Cluster  string     // cluster.name
	Conn     *nats.Conn // the worker's connection
	Leases   *Leases    // the worker's leases (its id is Leases.Owner)
	Registry *Registry  // placement's view; nil places every free thread here
	// Agents are the agents this worker can run, announced with its load
	// (the threads it holds, or Load's answer) every third of the lease
	// TTL.
	Agents  []string
	Load    func() int
	Inbound *Inbound
	Handle  Handler
	// Lost is told of a thread whose lease could not be renewed (it
	// expired; another worker may hold it now): the worker must stop
	// acting for it. May be nil.
	Lost func(thread string)
	// Claimed, if set, is told of each claim of a free thread this
	// worker made: won, or lost to another worker (metrics).
	Claimed func(won bool)
	// Retry is how long an event nobody could take waits before it is
	// delivered again (default 250ms).
	Retry time.Duration
	// Log gets what goes wrong (nil: slog.Default).
	Log *slog.Logger
	// EdgeKeys, if set, are the edges' signing keys: an event, from the
	// stream or forwarded, whose signature is missing or does not
	// verify under one of them is dropped with an error naming its id,
	// before it is placed (unless Unsigned accepts it). nil accepts
	// every event (tests of other things; gateway worker always sets
	// it).
	EdgeKeys *EdgeKeys
	// Unsigned, if set, says which events may come without a signature:
	// the take-over events workers publish, which carry no author, text
	// or intent (wire.IsTakeOver).
	Unsigned func(Event) bool
}

// Router is a worker's subscriber side: it takes events from the inbound
// stream (each delivered to one worker of the cluster), and gives each to
// the worker that owns its thread. A thread this worker holds is handled
// here; one another worker holds is forwarded to it (a request on
// <cluster>.worker.<id>.<partition>; no answer puts the event back); a
// thread nobody holds is claimed by the worker placement picks: here, or
// forwarded to it. The Router renews the leases it took and releases them
// when Run ends.
type Router struct {
	o  RouterOptions
	me string
	// ackWait is the inbound consumers' (AckWait of the lease TTL).
	ackWait time.Duration
	// taken are the events handed to their threads here, so that a copy
	// the stream gave out again is not.
	taken *taken

	ready chan struct{} // closed once Run has started

	mu    sync.Mutex
	owned map[string]Lease

	draining     chan struct{} // closed by StopClaiming
	stopClaiming func()
}

// NewRouter returns a Router; Run starts it.
func NewRouter(o RouterOptions) *Router {
	if o.Retry <= 0 {
		o.Retry = 250 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	r := &Router{o: o, me: o.Leases.Owner(), ackWait: AckWait(o.Leases.TTL()), taken: newTaken(), ready: make(chan struct{}), owned: map[string]Lease{}, draining: make(chan struct{})}
	if ackWaitSet > 0 {
		r.ackWait = ackWaitSet
	}
	r.stopClaiming = sync.OnceFunc(func() { close(r.draining) })
	return r
}

// StopClaiming begins a drain: Run takes no more events, neither from the
// stream nor forwarded (those of the threads this worker holds wait in
// the stream until it releases them), and withdraws the worker from
// placement, while it keeps renewing the leases it holds, so that the
// turns under way finish here. Cancelling Run's context then releases
// them.
func (r *Router) StopClaiming() { r.stopClaiming() }

// Ready is closed once Run consumes every partition of the inbound stream
// and has announced the worker.
func (r *Router) Ready() <-chan struct{} { return r.ready }

// Consumer is the prefix of the durable consumers all workers of a
// cluster share, one per partition of the inbound stream (workers-0 …
// workers-15).
const Consumer = "workers"

// Run routes events and announces the worker until ctx ends; then it
// withdraws the worker and releases the leases it holds.
func (r *Router) Run(ctx context.Context) error {
	stop, err := r.start(ctx)
	if err != nil {
		if ctx.Err() != nil { // stopped while starting
			r.releaseAll()
			return nil
		}
		return err
	}
	close(r.ready)
	defer stop()
	tick := time.NewTicker(max(r.o.Leases.TTL()/3, 10*time.Millisecond))
	defer tick.Stop()
	draining := r.draining
	for {
		select {
		case <-ctx.Done():
			stop()
			r.releaseAll()
			return nil
		case <-draining:
			draining = nil
			// Off the loop: stopping the deliveries waits for the
			// events being handed over, and the leases must be renewed
			// meanwhile (a worker whose drain began while it adopted
			// threads lost them all to the TTL).
			withdrawn := make(chan struct{})
			go func() {
				defer close(withdrawn)
				stop()
				if r.o.Registry != nil {
					if err := r.o.Registry.Withdraw(ctx, r.me); err != nil && ctx.Err() == nil {
						r.o.Log.Warn("cluster: withdrawing the worker", "err", err)
					}
				}
			}()
			defer func() { <-withdrawn }()
		case <-tick.C:
			r.renewAll(ctx)
			if draining == nil {
				break
			}
			if err := r.Announce(ctx); err != nil && ctx.Err() == nil {
				r.o.Log.Warn("cluster: announcing the worker", "err", err)
			}
		}
	}
}

// start subscribes to the worker's forwarding subjects and consumes the
// inbound stream's partitions, then announces the worker. Each partition
// has its consumer and its forwarding subject. A partition's events are
// handed out one at a time across the cluster (MaxAckPending 1): the next
// is delivered once this one was handed to its owner, so a thread's events
// reach its owner in stream order even when two workers take them, while
// the other partitions' events go on (a slow hand-over holds up its
// partition only). stop (called once, or more) stops the deliveries; on an
// error start has stopped what it started.
func (r *Router) start(ctx context.Context) (stop func(), err error) {
	var subs []*nats.Subscription
	var ccs []jetstream.ConsumeContext
	stop = sync.OnceFunc(func() {
		// Drained, not stopped: the events already handed to this
		// worker reach delivered, which gives them back at once when
		// the worker drains, instead of leaving them unacked until the
		// ack wait (the lease TTL) holds their partitions up.
		for _, cc := range ccs {
			cc.Drain()
			<-cc.Closed()
		}
		for _, sub := range subs {
			_ = sub.Unsubscribe()
		}
	})
	defer func() {
		if err != nil {
			stop()
		}
	}()
	for p := range Partitions {
		sub, err := r.o.Conn.Subscribe(fmt.Sprintf("%s.worker.%s.%d", r.o.Cluster, r.me, p), func(m *nats.Msg) { r.forwarded(ctx, m) })
		if err != nil {
			return stop, fmt.Errorf("cluster: worker subject: %w", err)
		}
		subs = append(subs, sub)
	}
	// The one consumer of the whole stream that workers before the
	// partitions shared: a work queue takes no partition's consumer
	// beside it.
	if err := r.o.Inbound.stream.DeleteConsumer(ctx, Consumer); err == nil {
		r.o.Log.Warn("cluster: deleted the inbound consumer of workers before partitions", "consumer", Consumer)
	} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return stop, fmt.Errorf("cluster: inbound consumer %s: %w", Consumer, err)
	}
	for p := range Partitions {
		cons, err := r.o.Inbound.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       fmt.Sprintf("%s-%d", Consumer, p),
			FilterSubject: fmt.Sprintf("%s.in.%d.>", r.o.Cluster, p),
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       r.ackWait,
			MaxAckPending: 1,
		})
		if err != nil {
			return stop, fmt.Errorf("cluster: inbound consumer %d: %w", p, err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) { r.delivered(ctx, m) })
		if err != nil {
			return stop, fmt.Errorf("cluster: consume partition %d: %w", p, err)
		}
		ccs = append(ccs, cc)
	}
	return stop, r.Announce(ctx)
}

// delivered routes an event from the stream, telling the stream every
// third of the ack wait that it is still at it (placing it, forwarding it
// to its owner or handing it to its thread here), so that the ack wait
// runs out only for a worker that died. A draining worker gives it back
// at once (another worker takes it, or it waits in the stream for the
// release of the thread this one holds).
func (r *Router) delivered(ctx context.Context, m jetstream.Msg) {
	select {
	case <-r.draining:
		_ = m.Nak()
		return
	default:
	}
	ev, err := eventOf(m.Headers(), m.Data())
	if err == nil {
		err = r.verify(ev)
	}
	if err != nil {
		r.o.Log.Error("cluster: dropping an inbound message", "event", ev.ID, "err", err)
		_ = m.Term()
		return
	}
	if md, err := m.Metadata(); err == nil {
		ev.Seq = md.Sequence.Stream
	}
	stop := every(r.ackWait/3, func() {
		_ = m.InProgress()
		if progressed != nil {
			progressed()
		}
	})
	owner, err := r.acquire(ctx, ev, false)
	switch {
	case err != nil:
		r.o.Log.Warn("cluster: placing an event", "event", ev.ID, "err", err)
	case owner == r.me:
		err = r.handle(ctx, ev)
	default:
		err = r.forward(ctx, owner, m, ev)
	}
	stop()
	if err != nil {
		_ = m.NakWithDelay(r.o.Retry)
		return
	}
	_ = m.Ack()
}

// AckWait is the inbound consumers' ack wait for a lease TTL: how long
// the stream waits for a worker's word on an event it delivered before it
// delivers the event again. A live worker's word comes every third of it
// (delivered), however long the event takes (an owner slower than that,
// a thread taken over editing what the worker before it left open first
// through an edge that may be restarting, would otherwise have the event
// delivered again, to a worker that forwards it back); so it runs out
// only for a worker that died, and its partition, held up behind the
// event, goes on. It is the TTL (2s at least, 30s at most): the event
// comes again by the time the dead worker's lease expired, and the
// thread is taken over then, not an ack wait later.
func AckWait(ttl time.Duration) time.Duration {
	return min(max(ttl, 2*time.Second), 30*time.Second)
}

// ackWaitSet, when set (tests), is the ack wait in place of AckWait's.
var ackWaitSet time.Duration

// progressed, when set (tests), is told each time a worker routing an
// event from the stream says it is still at it.
var progressed func()

// every calls say every d until the returned stop is called; stop waits
// for say's last call to return.
func every(d time.Duration, say func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				say()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// forwardSilence is how long a forwarder waits for a word from the owner:
// its answer, or its word that it is still taking the event (every
// forwardProgress while it does).
var (
	forwardSilence  = 5 * time.Second
	forwardProgress = time.Second
)

// hdrWorking marks an owner's word that it is still taking a forwarded
// event (a thread taken over reads the store and edits what the worker
// before it left open first, which may take longer than forwardSilence).
const hdrWorking = "Gateway-Working"

// forward asks owner to take the event; its empty answer means taken.
// It goes to the owner's subject of the event's partition, so the owner
// takes a partition's forwarded events one at a time, and the others'
// meanwhile. It waits as long as the owner says it is still taking the
// event (delivered keeps the stream from handing it out again): a forwarder that
// gave up on an owner still at work gave the event back to the stream,
// and the owner took it twice. An owner that says nothing for
// forwardSilence is taken as gone.
func (r *Router) forward(ctx context.Context, owner string, m jetstream.Msg, ev Event) error {
	fm := nats.NewMsg(fmt.Sprintf("%s.worker.%s.%d", r.o.Cluster, owner, partitionOf(ev.Thread)))
	for k, v := range m.Headers() {
		fm.Header[k] = v
	}
	fm.Header.Set(hdrSeq, strconv.FormatUint(ev.Seq, 10))
	fm.Data = m.Data()
	fm.Reply = r.o.Conn.NewInbox()
	sub, err := r.o.Conn.SubscribeSync(fm.Reply)
	if err != nil {
		return fmt.Errorf("cluster: forward to %s: %w", owner, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := r.o.Conn.PublishMsg(fm); err != nil {
		return fmt.Errorf("cluster: forward to %s: %w", owner, err)
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, forwardSilence)
		reply, err := sub.NextMsgWithContext(wctx)
		cancel()
		switch {
		case err != nil:
			return fmt.Errorf("cluster: forward to %s: %w", owner, err)
		case reply.Header.Get(hdrWorking) != "":
			continue
		case len(reply.Data) == 0 && reply.Header.Get("Status") != "":
			// 503: nobody takes the owner's subject.
			return fmt.Errorf("cluster: forward to %s: status %s", owner, reply.Header.Get("Status"))
		case len(reply.Data) > 0:
			return fmt.Errorf("cluster: %s did not take the event: %s", owner, reply.Data)
		}
		return nil
	}
}

// forwarded takes an event another worker forwarded here, telling the
// forwarder every forwardProgress that it is still at it.
func (r *Router) forwarded(ctx context.Context, m *nats.Msg) {
	stop := func() {}
	if m.Reply != "" {
		stop = every(forwardProgress, func() {
			w := nats.NewMsg(m.Reply)
			w.Header.Set(hdrWorking, "1")
			w.Data = []byte("still taking the event")
			_ = r.o.Conn.PublishMsg(w)
		})
	}
	ev, err := eventOf(m.Header, m.Data)
	if err == nil {
		if verr := r.verify(ev); verr != nil {
			// Taken (and dropped): asking again would fail the same way.
			stop()
			r.o.Log.Error("cluster: dropping a forwarded inbound message", "event", ev.ID, "err", verr)
			_ = m.Respond(nil)
			return
		}
		var owner string
		owner, err = r.acquire(ctx, ev, true)
		switch {
		case err != nil:
		case owner != r.me:
			err = fmt.Errorf("held by %s", owner)
		default:
			err = r.handle(ctx, ev)
		}
	}
	stop()
	if err != nil {
		_ = m.Respond([]byte(err.Error()))
		return
	}
	_ = m.Respond(nil)
}

// handle hands ev to its thread here, once: a copy of an event handed
// over already, or being handed over (the stream gave it out again, and
// it came forwarded or from the stream), is taken without the handler.
func (r *Router) handle(ctx context.Context, ev Event) error {
	return r.taken.take(ctx, ev.ID, func() error { return r.o.Handle(ctx, ev) })
}

// verify checks ev's signature against the edges' keys (when the router
// has them).
func (r *Router) verify(ev Event) error {
	if r.o.EdgeKeys == nil {
		return nil
	}
	err := r.o.EdgeKeys.Verify(ev)
	if errors.Is(err, ErrUnsigned) && r.o.Unsigned != nil && r.o.Unsigned(ev) {
		return nil
	}
	return err
}

// errDraining is a draining worker's answer to an event of a thread it
// does not hold: it claims no new thread.
var errDraining = errors.New("cluster: draining, claiming no new thread")

// acquire returns the owner of ev's thread, claiming it here when nobody
// holds it and placement picks this worker (or the event was forwarded
// here, placement having picked this worker elsewhere). A draining worker
// claims none.
func (r *Router) acquire(ctx context.Context, ev Event, forwarded bool) (string, error) {
	r.mu.Lock()
	_, mine := r.owned[ev.Thread]
	r.mu.Unlock()
	if mine {
		return r.me, nil
	}
	select {
	case <-r.draining:
		// Not even a thread whose lease bears this worker's name: an
		// earlier run of it (killed, started again with the same id)
		// left it, and the event is the thread's next owner's.
		return "", errDraining
	default:
	}
	h, held, err := r.o.Leases.Holder(ctx, ev.Thread)
	if err != nil {
		return "", err
	}
	if held && h.Owner != r.me {
		return h.Owner, nil
	}
	if !held && !forwarded && r.o.Registry != nil {
		if best, ok := r.o.Registry.Place(ev.Thread, ev.Agent); ok && best != r.me {
			return best, nil
		}
	}
	l, err := r.o.Leases.Claim(ctx, ev.Thread)
	if r.o.Claimed != nil && (err == nil || errors.Is(err, ErrHeld)) {
		r.o.Claimed(err == nil)
	}
	if errors.Is(err, ErrHeld) {
		return l.Owner, nil
	}
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.owned[ev.Thread] = l
	r.mu.Unlock()
	return r.me, nil
}

// Owned returns the threads this worker holds.
func (r *Router) Owned() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := make([]string, 0, len(r.owned))
	for t := range r.owned {
		ts = append(ts, t)
	}
	return ts
}

// Release gives a thread up (its agent stopped, it went idle): the next
// event is placed anew.
func (r *Router) Release(ctx context.Context, thread string) error {
	r.mu.Lock()
	l, ok := r.owned[thread]
	delete(r.owned, thread)
	r.mu.Unlock()
	if !ok {
		return nil
	}
	if err := r.o.Leases.Release(ctx, l); err != nil && !errors.Is(err, ErrLost) {
		return err
	}
	return nil
}

func (r *Router) renewAll(ctx context.Context) {
	r.mu.Lock()
	ls := make([]Lease, 0, len(r.owned))
	for _, l := range r.owned {
		ls = append(ls, l)
	}
	r.mu.Unlock()
	for _, l := range ls {
		nl, err := r.o.Leases.Renew(ctx, l)
		r.mu.Lock()
		cur, still := r.owned[l.Thread]
		switch {
		case !still || cur.Revision != l.Revision: // released meanwhile
		case errors.Is(err, ErrLost):
			delete(r.owned, l.Thread)
		case err == nil:
			r.owned[l.Thread] = nl
		}
		r.mu.Unlock()
		if errors.Is(err, ErrLost) && still && r.o.Lost != nil {
			r.o.Lost(l.Thread)
		} else if err != nil && !errors.Is(err, ErrLost) {
			r.o.Log.Warn("cluster: renewing a lease", "thread", l.Thread, "err", err)
		}
	}
}

// Announce tells placement this worker's load and agents now; Run does so
// when it starts and every third of the lease TTL.
func (r *Router) Announce(ctx context.Context) error {
	if r.o.Registry == nil {
		return nil
	}
	load := len(r.Owned())
	if r.o.Load != nil {
		load = r.o.Load()
	}
	r.mu.Lock()
	agents := r.o.Agents
	r.mu.Unlock()
	return r.o.Registry.Announce(ctx, WorkerInfo{ID: r.me, Load: load, Agents: agents})
}

// SetAgents changes the agents this worker announces (its configuration
// was reloaded), and announces them now.
func (r *Router) SetAgents(ctx context.Context, agents []string) error {
	r.mu.Lock()
	r.o.Agents = slices.Clone(agents)
	r.mu.Unlock()
	return r.Announce(ctx)
}

// releaseAll withdraws the worker and releases every lease held, on the
// way out (a context of its own: the run's has ended).
func (r *Router) releaseAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r.o.Registry != nil {
		if err := r.o.Registry.Withdraw(ctx, r.me); err != nil {
			r.o.Log.Warn("cluster: withdrawing the worker", "err", err)
		}
	}
	for _, t := range r.Owned() {
		if err := r.Release(ctx, t); err != nil {
			r.o.Log.Warn("cluster: releasing a lease", "thread", t, "err", err)
		}
	}
}
