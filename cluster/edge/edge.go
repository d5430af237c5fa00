// Package edge is the edge half of the seam between a platform adapter
// and the workers that run threads: it publishes an adapter's inbound
// events to the cluster's inbound stream and performs the operations
// workers ask of the adapter (cluster/remote is the worker half), each
// once per idempotency key.
package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure an Edge.
type Options struct {
	Cluster  string // cluster.name
	ID       string // this edge's id, unique in the cluster (letters, digits, - and _)
	Platform string // the adapter's platform, ThreadRef.Platform of its threads
	Adapter  channels.Adapter
	Conn     *nats.Conn
	JS       jetstream.JetStream
	Inbound  *cluster.Inbound
	// ResultTTL is how long an operation's result is remembered by its
	// idempotency key (default 1h): a retry within it is answered with
	// the first result.
	ResultTTL time.Duration
	// Busy is how long an operation begun by an edge that never recorded
	// its result (it died) blocks a retry of it (default 30s); then
	// another edge performs it. The edge performing it marks it anew
	// every third of Busy, so one that takes longer is performed once.
	Busy time.Duration
	// CallbackTTL is how long an event's callbacks (Fetch, Suggest,
	// Reply) stay answerable (default 10m).
	CallbackTTL time.Duration
	// Replicas are the copies of the buckets (default 1).
	Replicas int
	// Window is how many inbound events the edge takes from the adapter
	// before they are stored (default 256): their publishes are in
	// flight together (one thread's one after another); beyond it the
	// adapter's handler waits.
	Window int
	// PublishTimeout is how long a publish waits for its ack before it
	// is tried again (default 5s).
	PublishTimeout time.Duration
	// Drain is how long Run, once the adapter stopped, waits for the
	// events taken to be stored (default 30s); those left are logged
	// as lost.
	Drain time.Duration
	// LiveTTL is how long the edge's entry in the live bucket
	// (wire.LiveBucket) holds without being renewed (default 10s): a
	// worker stops sending a thread's operations to an edge that died
	// within it. The edge renews it three times per LiveTTL and deletes
	// it as soon as it stops.
	LiveTTL time.Duration
	Log     *slog.Logger
	// CatchUp, if its Window and Seen are set, reads what the adapter's
	// connection missed when it starts a new session (an adapter that
	// implements Sessions) and publishes it.
	CatchUp CatchUp
	// Observer, if set, is told what the edge did (its metrics).
	Observer Observer
}

// Observer is told what an edge did, for its metrics; its methods are
// called concurrently.
type Observer interface {
	// Published is told of each try to put an inbound event on the
	// stream: result is "stored", "duplicate" (the duplicate window
	// dropped it) or "error" (it is tried again).
	Published(platform, result string)
	// Performed is told of each operation answered: op is its wire name
	// ("invalid" when it could not be read), result "ok", "error",
	// "deduplicated" (answered with the result of an earlier try) or
	// "busy" (another edge is performing it).
	Performed(platform, op, result string)
}

// Edge serves one platform's adapter to the cluster.
type Edge struct {
	o     Options
	pub   *publisher
	ops   jetstream.KeyValue
	edges jetstream.KeyValue
	live  jetstream.KeyValue
	since time.Time // when Run started serving
	// caps is what the edge announced last (Run, then keepLive).
	caps wire.Caps

	mu        sync.Mutex // guards the fields below
	callbacks map[channels.MessageID]callback
	ready     chan struct{} // closed once Run serves
	// drop, set by tests, says whether to lose a reply on its way.
	drop func() bool
}

// callback is what an event could call back.
type callback struct {
	in      channels.Inbound
	expires time.Time
	refused bool // its fetched files were told too large to pass
}

// New opens the buckets of the seam; Run serves.
func New(ctx context.Context, o Options) (*Edge, error) {
	for k, v := range map[string]string{"cluster": o.Cluster, "edge id": o.ID, "platform": o.Platform} {
		if !cluster.ValidName(v) {
			return nil, fmt.Errorf("edge: %s %q: want letters, digits, - and _", k, v)
		}
	}
	if o.Adapter == nil || o.Conn == nil || o.JS == nil || o.Inbound == nil {
		return nil, errors.New("edge: an edge needs an adapter, a connection, JetStream and the inbound stream")
	}
	if o.ResultTTL <= 0 {
		o.ResultTTL = time.Hour
	}
	if o.Busy <= 0 {
		o.Busy = 30 * time.Second
	}
	if o.CallbackTTL <= 0 {
		o.CallbackTTL = 10 * time.Minute
	}
	if o.Window <= 0 {
		o.Window = 256
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = 5 * time.Second
	}
	if o.Drain <= 0 {
		o.Drain = 30 * time.Second
	}
	if o.LiveTTL <= 0 {
		o.LiveTTL = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	pub, err := newPublisher(o.Conn, o.Inbound, o.Window, o.PublishTimeout, o.Log)
	if err != nil {
		return nil, err
	}
	ops, err := createBucket(ctx, o.JS, "results", jetstream.KeyValueConfig{
		Bucket:      wire.OpsBucket(o.Cluster),
		Description: "outbound operations' results by idempotency key",
		TTL:         o.ResultTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    max(o.Replicas, 1),
	})
	if err != nil {
		return nil, err
	}
	edges, err := OpenEdges(ctx, o.JS, o.Cluster, o.Replicas)
	if err != nil {
		return nil, err
	}
	live, err := OpenLive(ctx, o.JS, o.Cluster, o.Replicas)
	if err != nil {
		return nil, err
	}
	e := &Edge{o: o, pub: pub, ops: ops, edges: edges, live: live,
		callbacks: map[channels.MessageID]callback{}, ready: make(chan struct{})}
	pub.tried = e.published
	return e, nil
}

// OpenEdges creates or opens the bucket of the platforms' announcements.
func OpenEdges(ctx context.Context, js jetstream.JetStream, clusterName string, replicas int) (jetstream.KeyValue, error) {
	return createBucket(ctx, js, "edges", jetstream.KeyValueConfig{
		Bucket:      wire.EdgesBucket(clusterName),
		Description: "each platform's capabilities and limits, as its edges announce them",
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
	})
}

// OpenLive creates or opens the bucket of the live edges
// (wire.LiveBucket). Its entries are renewed and deleted by their edges;
// the bucket's age limit only sweeps those of edges that died.
func OpenLive(ctx context.Context, js jetstream.JetStream, clusterName string, replicas int) (jetstream.KeyValue, error) {
	return createBucket(ctx, js, "live edges", jetstream.KeyValueConfig{
		Bucket:      wire.LiveBucket(clusterName),
		Description: "the edges serving each platform now, renewed by each edge",
		TTL:         time.Hour,
		Storage:     jetstream.MemoryStorage,
		Replicas:    max(replicas, 1),
	})
}

// createBucket creates the bucket cfg describes, or updates it to cfg,
// while the cluster settles; an error names the bucket by what.
func createBucket(ctx context.Context, js jetstream.JetStream, what string, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, cfg)
	})
	if err != nil {
		return nil, fmt.Errorf("edge: %s bucket: %w", what, err)
	}
	return kv, nil
}

// Run announces the platform's capabilities, serves operations and runs
// the adapter, publishing what it delivers, until ctx ends. On the way
// out it stops reading first (the adapter's Run returns), waits for the
// events it took to be stored (at most Drain), then takes no new
// operation and waits for those under way. Run it once.
func (e *Edge) Run(ctx context.Context) error {
	// Operations run on a context of their own, so that those under way
	// when ctx ends are finished (and their results recorded).
	opCtx, stopOps := context.WithCancel(context.WithoutCancel(ctx))
	defer stopOps()
	var wg sync.WaitGroup
	serve := func(m *nats.Msg) { wg.Go(func() { e.serve(opCtx, m) }) }
	ops, err := e.o.Conn.QueueSubscribe(wire.OpsSubject(e.o.Cluster, e.o.Platform), wire.OpsQueue, serve)
	if err != nil {
		return fmt.Errorf("edge: operations subject: %w", err)
	}
	cbs, err := e.o.Conn.Subscribe(wire.EdgeSubject(e.o.Cluster, e.o.ID), serve)
	if err != nil {
		_ = ops.Unsubscribe()
		return fmt.Errorf("edge: callbacks subject: %w", err)
	}
	// Announced once it serves: a worker that read the announcement
	// finds an edge to ask.
	if err := e.announce(ctx); err != nil {
		_ = ops.Unsubscribe()
		_ = cbs.Unsubscribe()
		wg.Wait()
		return fmt.Errorf("edge: announce %s: %w", e.o.Platform, err)
	}
	// Live once it serves; gone as soon as ctx ends, so that workers send
	// the threads' next operations to another edge while this one
	// finishes those under way.
	live := make(chan struct{})
	e.since = time.Now()
	if err := e.renew(ctx); err != nil {
		e.o.Log.Warn("edge: announcing this edge live", "err", err)
	}
	go func() { defer close(live); e.keepLive(ctx) }()
	close(e.ready)
	var catching sync.WaitGroup
	catchCtx, stopCatching := context.WithCancel(ctx)
	if s, ok := e.o.Adapter.(Sessions); ok && e.o.CatchUp.Window > 0 && e.o.CatchUp.Seen != nil {
		catching.Go(func() { e.catchUps(catchCtx, s) })
	}
	runErr := e.o.Adapter.Run(ctx, e.publish)
	<-live
	stopCatching()
	catching.Wait() // what it handed over is drained below
	e.pub.drain(e.o.Drain)
	_ = ops.Unsubscribe()
	_ = cbs.Unsubscribe()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(e.o.Busy):
		stopOps()
		<-done
	}
	return runErr
}

// announce puts the platform's capabilities and limits, as the adapter
// has them now (channels.CapsOf), in the edges' bucket, where workers
// follow them: the first time, and whenever they changed since.
func (e *Edge) announce(ctx context.Context) error {
	c := wire.FromCaps(e.o.Platform, channels.CapsOf(e.o.Adapter), e.o.Adapter.Limits())
	again := e.caps.Platform != ""
	if again && c.Caps() == e.caps.Caps() && c.Limits == e.caps.Limits {
		return nil
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := e.edges.Put(ctx, e.o.Platform, data); err != nil {
		return err
	}
	if again {
		e.o.Log.Info("edge: the adapter's capabilities changed; announced anew", "platform", e.o.Platform, "capabilities", c.Names)
	}
	e.caps = c
	return nil
}

// renew puts the edge's entry in the live bucket.
func (e *Edge) renew(ctx context.Context) error {
	v, _ := json.Marshal(wire.Live{Platform: e.o.Platform, Edge: e.o.ID, TTL: e.o.LiveTTL, Since: e.since})
	_, err := e.live.Put(ctx, wire.LiveKey(e.o.Platform, e.o.ID), v)
	return err
}

// keepLive renews the edge's entry, and announces the adapter's
// capabilities anew where they changed, until ctx ends; then it deletes
// the entry.
func (e *Edge) keepLive(ctx context.Context) {
	t := time.NewTicker(e.o.LiveTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := e.renew(ctx); err != nil && ctx.Err() == nil {
				e.o.Log.Warn("edge: renewing this edge's entry", "err", err)
			}
			if err := e.announce(ctx); err != nil && ctx.Err() == nil {
				e.o.Log.Warn("edge: announcing the adapter's capabilities anew", "err", err)
			}
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := e.live.Delete(dctx, wire.LiveKey(e.o.Platform, e.o.ID)); err != nil {
				e.o.Log.Warn("edge: withdrawing this edge", "err", err)
			}
			return
		}
	}
}

// Ready is closed once Run serves operations and has announced the
// platform.
func (e *Edge) Ready() <-chan struct{} { return e.ready }

// publish hands one inbound event to the publisher, which puts it on the
// inbound stream after the events of its thread taken before it, trying
// until it is stored (the duplicate window drops a second copy, of a
// retry or of a platform's redelivery). It returns once the event is
// taken, before it is stored (it waits while Window events are), or,
// for an adapter that acknowledges the event once it returns
// (channels.AckAfterHandler), once it is stored.
func (e *Edge) publish(ctx context.Context, in channels.Inbound) {
	if in.Thread.Platform != e.o.Platform {
		e.o.Log.Error("edge: an event of another platform", "thread", in.Thread, "platform", e.o.Platform)
		return
	}
	id := inboundID(e.o.Platform, in)
	if in.ID == "" { // an id of its own, for the callbacks
		in.ID = channels.MessageID("edge-" + wire.NewKey())
	}
	if id == "" { // nothing to de-duplicate by
		id = e.o.Platform + ":" + string(in.ID)
	}
	if in.Fetch != nil || in.Suggest != nil || in.Reply != nil {
		e.keep(in)
	}
	data, err := json.Marshal(wire.FromInbound(in, e.o.ID))
	if err != nil {
		e.o.Log.Error("edge: encoding an event", "err", err)
		return
	}
	stored := e.pub.put(ctx, cluster.Event{ID: id, Thread: in.Thread.String(), Agent: in.Agent, Data: data})
	if channels.AcksAfterHandler(ctx) {
		select {
		case <-stored:
		case <-ctx.Done():
		}
	}
}

// keep remembers an event's callbacks for CallbackTTL.
func (e *Edge) keep(in channels.Inbound) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, c := range e.callbacks {
		if now.After(c.expires) {
			delete(e.callbacks, id)
		}
	}
	e.callbacks[in.ID] = callback{in: in, expires: now.Add(e.o.CallbackTTL)}
}

// record is an operation's entry in the results bucket.
type record struct {
	// Edge and Began say who is performing it since when; Result is set
	// once it was performed.
	Edge   string       `json:"edge"`
	Began  time.Time    `json:"began"`
	Result *wire.Result `json:"result,omitempty"`
}

// decodeRecord reads an entry of the results bucket (anyone with access
// to the bucket may have written it); false when it is no record.
func decodeRecord(b []byte) (record, bool) {
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil || rec.Edge == "" {
		return record{}, false
	}
	if rec.Result != nil && rec.Result.Err != nil && rec.Result.Err.Kind == "" {
		return record{}, false
	}
	return rec, true
}

// keyRE is what an idempotency key may hold (the bucket's key alphabet).
var keyRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// serve performs one operation and answers it.
func (e *Edge) serve(ctx context.Context, m *nats.Msg) {
	op, err := wire.DecodeOp(m.Data)
	var res wire.Result
	switch {
	case err != nil:
		res.Err = &wire.Error{Kind: wire.ErrPermanent, Message: err.Error()}
		e.performed("invalid", "error")
	case !keyRE.MatchString(op.Key):
		res.Err = &wire.Error{Kind: wire.ErrPermanent, Message: fmt.Sprintf("bad idempotency key %q", op.Key)}
		e.performed("invalid", "error")
	case m.Reply == "" || !once(op.Op): // a notice nobody waits for, or a read
		res = e.perform(ctx, op)
		e.performed(op.Op, outcome(res))
	default:
		res = e.once(ctx, op)
	}
	if m.Reply == "" {
		return
	}
	if res.Edge == "" {
		res.Edge = e.o.ID
	}
	e.mu.Lock()
	drop := e.drop
	e.mu.Unlock()
	if drop != nil && drop() {
		return
	}
	data, err := json.Marshal(res)
	if err != nil {
		e.o.Log.Error("edge: encoding a result", "op", op.Op, "err", err)
		return
	}
	_ = m.Respond(data)
}

// once reports whether op changes what people see, so that it must be
// performed once per key; reads and notices may be repeated.
func once(op string) bool {
	switch op {
	case wire.OpMessagesAfter, wire.OpFetch, wire.OpToolDetail, wire.OpShowAgent, wire.OpShowSession, wire.OpTyping:
		return false
	}
	return true
}

// once performs op unless its key was performed already (the first result
// then) or is being performed by another edge (busy: ask again later).
func (e *Edge) once(ctx context.Context, op wire.Op) wire.Result {
	key := e.o.Platform + "." + op.Key
	mine, _ := json.Marshal(record{Edge: e.o.ID, Began: time.Now()})
	rev, err := e.ops.Create(ctx, key, mine)
	if errors.Is(err, jetstream.ErrKeyExists) {
		ent, gerr := e.ops.Get(ctx, key)
		if gerr != nil {
			e.performed(op.Op, "busy")
			return wire.Result{Err: &wire.Error{Kind: wire.ErrBusy, Message: gerr.Error()}}
		}
		rec, ok := decodeRecord(ent.Value())
		if !ok {
			rec = record{} // no edge wrote it: taken over below
		}
		if rec.Result != nil {
			e.performed(op.Op, "deduplicated")
			return *rec.Result
		}
		if time.Since(rec.Began) < e.o.Busy {
			e.performed(op.Op, "busy")
			return wire.Result{Err: &wire.Error{Kind: wire.ErrBusy, Message: "being performed by edge " + rec.Edge}}
		}
		rev, err = e.ops.Update(ctx, key, mine, ent.Revision())
		if err != nil {
			e.performed(op.Op, "busy")
			return wire.Result{Err: &wire.Error{Kind: wire.ErrBusy, Message: err.Error()}}
		}
	} else if err != nil {
		e.performed(op.Op, "error")
		return wire.Result{Err: &wire.Error{Kind: wire.ErrOther, Message: "results bucket: " + err.Error()}}
	}
	stop, last := e.stillAt(ctx, key, rev)
	res := e.perform(ctx, op)
	res.Edge = e.o.ID // a repeat's answer names the edge that performed it
	e.performed(op.Op, outcome(res))
	done, _ := json.Marshal(record{Edge: e.o.ID, Began: time.Now(), Result: &res})
	stop()
	if _, err := e.ops.Update(ctx, key, done, *last); err != nil {
		e.o.Log.Warn("edge: recording a result", "op", op.Op, "err", err)
	}
	return res
}

// stillAt writes the record of an operation being performed at revision
// rev anew every third of Busy, until stop is called, so that a retry of
// an operation that takes longer than Busy (a post waiting out a rate
// limit, a large upload) is answered "busy" rather than performed again:
// only an edge that died leaves its record to grow Busy old. *rev is the
// record's revision after the last write, once stop returned.
func (e *Edge) stillAt(ctx context.Context, key string, rev uint64) (stop func(), revision *uint64) {
	done, ended := make(chan struct{}), make(chan struct{})
	revision = &rev
	go func() {
		defer close(ended)
		t := time.NewTicker(e.o.Busy / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mine, _ := json.Marshal(record{Edge: e.o.ID, Began: time.Now()})
				r, err := e.ops.Update(ctx, key, mine, rev)
				if err != nil {
					e.o.Log.Warn("edge: marking an operation still under way", "key", key, "err", err)
					continue
				}
				rev = r
			}
		}
	}()
	return func() { close(done); <-ended }, revision
}

// perform calls the adapter.
func (e *Edge) perform(ctx context.Context, op wire.Op) wire.Result {
	e.o.Log.Debug("edge: performing an operation", "op", op.Op, "thread", op.Thread, "message", op.Handle.ID, "key", op.Key)
	a := e.o.Adapter
	var (
		h   channels.Handle
		err error
		res wire.Result
	)
	unsupported := false
	switch op.Op {
	case wire.OpPost:
		if op.Message == nil {
			err = channels.Permanent(errors.New("post without a message"))
			break
		}
		h, err = a.Post(ctx, op.Thread, *op.Message)
	case wire.OpEdit:
		ed, ok := channels.As[channels.Editor](a)
		if unsupported = !ok || op.Message == nil; !unsupported {
			err = ed.Edit(ctx, op.Handle, *op.Message)
		}
	case wire.OpTyping:
		ty, ok := channels.As[channels.Typer](a)
		if unsupported = !ok; ok {
			err = ty.Typing(ctx, op.Thread)
		}
	case wire.OpStopTyping:
		ts, ok := channels.As[channels.TypingStopper](a)
		if unsupported = !ok; ok {
			err = ts.StopTyping(ctx, op.Thread)
		}
	case wire.OpPrompt:
		p, ok := channels.As[channels.Prompter](a)
		if unsupported = !ok || op.Choice == nil; !unsupported {
			h, err = p.Prompt(ctx, op.Thread, *op.Choice)
		}
	case wire.OpUpload:
		u, ok := channels.As[channels.Uploader](a)
		if unsupported = !ok || op.Upload == nil; !unsupported {
			h, err = u.Upload(ctx, op.Thread, *op.Upload)
		}
	case wire.OpSetTitle:
		ti, ok := channels.As[channels.Titler](a)
		if unsupported = !ok; ok {
			err = ti.SetTitle(ctx, op.Thread, op.Text)
		}
	case wire.OpCard:
		c, ok := channels.As[channels.Carder](a)
		if unsupported = !ok; ok {
			h, err = c.Card(ctx, op.Thread, op.Handle, op.Rows)
		}
	case wire.OpReact, wire.OpUnreact:
		r, ok := channels.As[channels.Reactor](a)
		if unsupported = !ok; ok && op.Op == wire.OpReact {
			err = r.React(ctx, op.Handle, op.Text)
		} else if ok {
			err = r.Unreact(ctx, op.Handle, op.Text)
		}
	case wire.OpForm:
		f, ok := channels.As[channels.Former](a)
		if unsupported = !ok || op.Form == nil; !unsupported {
			h, err = f.Form(ctx, op.Thread, *op.Form)
		}
	case wire.OpSetCommands:
		c, ok := channels.As[channels.Commander](a)
		if unsupported = !ok; ok {
			err = c.SetCommands(ctx, op.Cmds)
		}
	case wire.OpMessagesAfter:
		hi, ok := channels.As[channels.History](a)
		if unsupported = !ok; ok {
			var p channels.Page
			p, err = hi.MessagesAfter(ctx, op.Thread, op.After, op.Limit)
			if err == nil {
				res.Page = &wire.Page{Last: p.Last, More: p.More}
				for _, in := range p.Messages {
					if in.ID == "" {
						continue // the worker cannot answer it once
					}
					if in.Fetch != nil || in.Suggest != nil || in.Reply != nil {
						e.keep(in)
					}
					res.Page.Messages = append(res.Page.Messages, wire.FromInbound(in, e.o.ID))
				}
			}
		}
	case wire.OpTurnEnded:
		te, ok := channels.As[channels.TurnEnder](a)
		if unsupported = !ok; ok {
			te.TurnEnded(ctx, op.Thread)
		}
	case wire.OpToolDetail:
		td, ok := channels.As[channels.ToolDetailer](a)
		if unsupported = !ok || op.Detail == nil; !unsupported {
			td.ToolDetail(op.Thread, op.Text, *op.Detail)
		}
	case wire.OpShowAgent:
		as, ok := channels.As[channels.AgentShower](a)
		if unsupported = !ok; ok {
			as.ShowAgent(op.Thread, op.Text)
		}
	case wire.OpShowSession:
		ss, ok := channels.As[channels.SessionShower](a)
		if unsupported = !ok || op.Session == nil; !unsupported {
			ss.ShowSession(op.Thread, *op.Session)
		}
	case wire.OpFetch, wire.OpSuggest, wire.OpReply:
		return e.callback(ctx, op)
	}
	if unsupported {
		return wire.Result{Err: &wire.Error{Kind: wire.ErrUnsupported, Message: fmt.Sprintf("%s: the %s adapter cannot %s", e.o.ID, e.o.Platform, op.Op)}}
	}
	res.Handle, res.Err = h, wire.ErrorOf(err)
	return res
}

// callback calls a function of an event this edge took.
func (e *Edge) callback(ctx context.Context, op wire.Op) wire.Result {
	e.mu.Lock()
	c, ok := e.callbacks[op.Event]
	e.mu.Unlock()
	if !ok || time.Now().After(c.expires) {
		return wire.Result{Err: &wire.Error{Kind: wire.ErrPermanent, Message: fmt.Sprintf("%s: event %q is not known here (any more)", e.o.ID, op.Event)}}
	}
	var err error
	switch {
	case op.Op == wire.OpFetch && c.in.Fetch != nil:
		return wire.Result{Files: e.fetched(ctx, op.Event, c.in, c.in.Fetch(ctx))}
	case op.Op == wire.OpSuggest && c.in.Suggest != nil:
		err = c.in.Suggest(ctx, op.Options)
	case op.Op == wire.OpReply && c.in.Reply != nil:
		err = c.in.Reply(ctx, op.Text)
	default:
		return wire.Result{Err: &wire.Error{Kind: wire.ErrUnsupported, Message: fmt.Sprintf("event %q has no %s", op.Event, op.Op)}}
	}
	return wire.Result{Err: wire.ErrorOf(err)}
}
