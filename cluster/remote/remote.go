// Package remote is the worker half of the seam between a platform
// adapter and the threads: a channels.Adapter whose Run delivers the
// events the worker's cluster.Router hands it and whose operations are
// NATS requests to the platform's edges (cluster/edge), each with an
// idempotency key that stays the same across the retries of one
// operation, so that the edges perform it once.
//
// # Capabilities
//
// An edge's capabilities are known only from what it announced (wire.Caps,
// in the edges' bucket), and they change: an edge of another release, or
// one whose platform granted or withdrew a capability, announces again.
// So the Adapter implements every capability interface of channels (but
// channels.NewSessions: the edges read what their connection missed
// themselves, cluster/edge's catch-up) and reports what the edges
// announced last as channels.Caps
// (channels.CapsReporter; Check always, which asks the worker's own NATS
// connection): the gateway, which finds a capability with channels.As,
// sees one exactly where the edge's adapter has it. Open reads the
// announcement there is; Run follows those that come after it, so a
// capability an edge adds is used from the next turn on, without a
// restart of the worker. An operation whose capability the edges did not
// announce fails as a *channels.PermanentError without a request (Edit,
// Typing, Prompt, Upload, Card, Form, MessagesAfter, React, Unreact);
// those whose absence people cannot tell from a call that does nothing
// (StopTyping, SetTitle, SetCommands, TurnEnded, ToolDetail, ShowAgent,
// ShowSession) do nothing.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure an Adapter.
type Options struct {
	Cluster  string // cluster.name
	Platform string // the platform the edges serve
	Conn     *nats.Conn
	JS       jetstream.JetStream
	// Timeout is how long one attempt of an operation waits for an edge's
	// answer (default 5s); then it is asked again, with the same key.
	Timeout time.Duration
	// GiveUp is how long an operation is tried (default 30s) before it
	// fails as a platform that cannot be reached (the lane tries again
	// later, as for a local adapter).
	GiveUp time.Duration
	// Pace is how long a thread's operations wait, after the thread moved
	// to another edge, since its last operation on the edge before
	// (default 5s, the window of Discord's message buckets): the new
	// edge knows nothing of what the old one spent of the thread's rate
	// limits, and the platform's window is over by then.
	Pace time.Duration
	Log  *slog.Logger
	// Replicas of the edges' bucket (cluster.replicas), which Open creates
	// or updates.
	Replicas int
}

// Adapter is one platform's adapter on a worker. Its methods are safe
// for concurrent use.
type Adapter struct {
	o       Options
	edgesKV jetstream.KeyValue
	// ann is the platform's announcement read last (Open, then Run).
	ann atomic.Pointer[announcement]

	mu      sync.Mutex
	handler func(context.Context, channels.Inbound) // Run's, nil while none runs

	// live are the platform's live edges (wire.LiveBucket), with when
	// each entry lapses unless renewed; nil while the bucket is unknown.
	liveKV jetstream.KeyValue
	live   map[string]time.Time
	// left and joined are when edges stopped and started serving, as
	// this worker saw it (pruned once Pace old): a thread this worker
	// did not serve lately may have been on another edge by another
	// worker.
	left, joined map[string]time.Time
	// ended is when each edge's process before the one serving now ended
	// (its entry deleted, or replaced by a new process's), as this worker
	// saw it (pruned once Pace old): what it spent in a thread's window
	// is unknown to the process after it, whichever worker asked it.
	ended map[string]time.Time
	// since is when each live edge started serving, as it says.
	since map[string]time.Time
	// threads are the edges that answered each thread's operations
	// recently, and when they last did (pruned once Pace old).
	threads   map[channels.ThreadRef]map[string]time.Time
	nextPrune int

	// given are the keys of operations given up on, for their retries.
	given givenUp
}

var (
	_ channels.Adapter       = (*Adapter)(nil)
	_ channels.CapsReporter  = (*Adapter)(nil)
	_ channels.Editor        = (*Adapter)(nil)
	_ channels.Typer         = (*Adapter)(nil)
	_ channels.TypingStopper = (*Adapter)(nil)
	_ channels.Prompter      = (*Adapter)(nil)
	_ channels.Uploader      = (*Adapter)(nil)
	_ channels.Titler        = (*Adapter)(nil)
	_ channels.Carder        = (*Adapter)(nil)
	_ channels.Reactor       = (*Adapter)(nil)
	_ channels.Former        = (*Adapter)(nil)
	_ channels.Commander     = (*Adapter)(nil)
	_ channels.History       = (*Adapter)(nil)
	_ channels.TurnEnder     = (*Adapter)(nil)
	_ channels.ToolDetailer  = (*Adapter)(nil)
	_ channels.AgentShower   = (*Adapter)(nil)
	_ channels.SessionShower = (*Adapter)(nil)
	_ channels.Checker       = (*Adapter)(nil)
)

// Open waits until an edge announced the platform (or ctx ends) and
// returns its adapter, with the capabilities the edge announced.
func Open(ctx context.Context, o Options) (*Adapter, error) {
	if !cluster.ValidName(o.Cluster) || !cluster.ValidName(o.Platform) {
		return nil, fmt.Errorf("remote: cluster %q, platform %q: want letters, digits, - and _", o.Cluster, o.Platform)
	}
	if o.Conn == nil || o.JS == nil {
		return nil, errors.New("remote: an adapter needs a connection and JetStream")
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.GiveUp <= 0 {
		o.GiveUp = 30 * time.Second
	}
	if o.Pace <= 0 {
		o.Pace = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	kv, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		// Opened as it is when it exists (an edge made it, with other
		// replicas perhaps).
		if kv, err := o.JS.KeyValue(ctx, wire.EdgesBucket(o.Cluster)); err == nil {
			return kv, nil
		}
		return o.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: wire.EdgesBucket(o.Cluster), Storage: jetstream.FileStorage, Replicas: max(o.Replicas, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("remote: edges bucket: %w", err)
	}
	w, err := kv.Watch(ctx, o.Platform)
	if err != nil {
		return nil, fmt.Errorf("remote: watch %s: %w", o.Platform, err)
	}
	defer w.Stop()
	var caps wire.Caps
	for caps.Platform == "" {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("remote: no edge announced %s: %w", o.Platform, ctx.Err())
		case ent := <-w.Updates():
			if c, ok := announced(ent, o); ok {
				caps = c
			}
		}
	}
	a := &Adapter{o: o, edgesKV: kv, live: map[string]time.Time{},
		left: map[string]time.Time{}, joined: map[string]time.Time{}, ended: map[string]time.Time{}, since: map[string]time.Time{},
		threads: map[channels.ThreadRef]map[string]time.Time{}, nextPrune: 256}
	a.ann.Store(&announcement{caps: caps.Caps(), limits: caps.Limits})
	// The edge created the bucket before it announced the platform;
	// without it (an older edge) operations go to the queue group.
	if kv, err := o.JS.KeyValue(ctx, wire.LiveBucket(o.Cluster)); err == nil {
		a.liveKV = kv
		if err := a.watchLive(ctx, true); err != nil {
			o.Log.Warn("remote: reading the live edges", "platform", o.Platform, "err", err)
		}
	} else {
		o.Log.Info("remote: no live edges bucket; operations go to any edge", "platform", o.Platform, "err", err)
	}
	return a, nil
}

// announcement is what the adapter takes of an announcement.
type announcement struct {
	caps   channels.Caps
	limits channels.Limits
}

// announced returns the announcement an entry of the edges' bucket holds
// for o's platform, false (logged where it is bad) when it holds none.
func announced(ent jetstream.KeyValueEntry, o Options) (wire.Caps, bool) {
	if ent == nil || ent.Operation() != jetstream.KeyValuePut {
		return wire.Caps{}, false
	}
	c, err := wire.DecodeCaps(ent.Value())
	if err != nil || c.Platform != o.Platform {
		o.Log.Error("remote: a bad announcement", "platform", o.Platform, "err", err)
		return wire.Caps{}, false
	}
	return c, true
}

// announcement returns the platform's announcement read last.
func (a *Adapter) announcement() announcement {
	if an := a.ann.Load(); an != nil {
		return *an
	}
	return announcement{}
}

// Caps reports the capabilities the edges announced last, and Check.
func (a *Adapter) Caps() channels.Caps {
	c := a.announcement().caps
	c.Check = true // the worker's own connection, whatever the edges have
	return c
}

// Run delivers the events Deliver gets to h until ctx ends, and follows
// the platform's announcements and live edges meanwhile. One Run at a
// time.
func (a *Adapter) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	if ctx.Err() != nil {
		return nil
	}
	a.mu.Lock()
	if a.handler != nil {
		a.mu.Unlock()
		return errors.New("remote: Run is running already")
	}
	a.handler = h
	a.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { a.keepWatching(ctx, "the announcements", a.watchEdges) })
	if a.liveKV != nil {
		wg.Go(func() {
			a.keepWatching(ctx, "the live edges", func(ctx context.Context) error { return a.watchLive(ctx, false) })
		})
	}
	<-ctx.Done()
	wg.Wait()
	a.mu.Lock()
	a.handler = nil
	a.mu.Unlock()
	return nil
}

// keepWatching calls watch until ctx ends, again a second after it
// failed.
func (a *Adapter) keepWatching(ctx context.Context, what string, watch func(context.Context) error) {
	for ctx.Err() == nil {
		if err := watch(ctx); err != nil && ctx.Err() == nil {
			a.o.Log.Warn("remote: watching "+what, "platform", a.o.Platform, "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// watchEdges follows the platform's announcements until ctx ends. The
// watch starts with the announcement there is now, so that one made
// between Open and Run is not missed.
func (a *Adapter) watchEdges(ctx context.Context) error {
	return watch(ctx, a.edgesKV, a.o.Platform, func(ent jetstream.KeyValueEntry) bool {
		if c, ok := announced(ent, a.o); ok {
			a.take(c)
		}
		return true
	}, jetstream.IgnoreDeletes())
}

// take makes c the platform's announcement.
func (a *Adapter) take(c wire.Caps) {
	an := &announcement{caps: c.Caps(), limits: c.Limits}
	if old := a.ann.Swap(an); old != nil && *old != *an {
		a.o.Log.Info("remote: the edges announced other capabilities or limits", "platform", a.o.Platform,
			"capabilities", an.caps.Names(), "before", old.caps.Names())
	}
}

// Deliver hands an event an edge published to Run's handler. It fails
// when Run has not started (the cluster delivers the event again).
func (a *Adapter) Deliver(ctx context.Context, w wire.Inbound) error {
	a.mu.Lock()
	h := a.handler
	a.mu.Unlock()
	if h == nil {
		return fmt.Errorf("remote: %s is not running", a.o.Platform)
	}
	h(ctx, a.inbound(w))
	return nil
}

// inbound returns the event with its callbacks as calls to its edge.
func (a *Adapter) inbound(w wire.Inbound) channels.Inbound {
	in := w.Inbound()
	subj := wire.EdgeSubject(a.o.Cluster, w.Edge)
	if w.Fetch {
		in.Fetch = func(ctx context.Context) []channels.File {
			res, err := a.call(ctx, subj, wire.Op{Op: wire.OpFetch, Event: w.ID})
			if err != nil {
				a.o.Log.Warn("remote: fetching files", "event", w.ID, "err", err)
				return w.Files
			}
			return res.Files
		}
	}
	if w.Suggest {
		in.Suggest = func(ctx context.Context, options []channels.Option) error {
			_, err := a.call(ctx, subj, wire.Op{Op: wire.OpSuggest, Event: w.ID, Options: options})
			return err
		}
	}
	if w.Reply {
		in.Reply = func(ctx context.Context, text string) error {
			_, err := a.call(ctx, subj, wire.Op{Op: wire.OpReply, Event: w.ID, Text: text})
			return err
		}
	}
	return in
}

// Handler returns the worker's cluster.Handler for these adapters: it
// decodes an event and delivers it to its platform's adapter.
func Handler(adapters ...*Adapter) cluster.Handler {
	by, log := map[string]*Adapter{}, slog.Default()
	for _, a := range adapters {
		by[a.o.Platform], log = a, a.o.Log
	}
	return func(ctx context.Context, ev cluster.Event) error {
		w, err := wire.DecodeInbound(ev.Data)
		if err != nil {
			// Delivering it again would fail the same way.
			log.Error("remote: dropping an event", "event", ev.ID, "err", err)
			return nil
		}
		a, ok := by[w.Thread.Platform]
		if !ok {
			return fmt.Errorf("remote: no adapter for %s on this worker", w.Thread.Platform)
		}
		return a.Deliver(ctx, w)
	}
}

// Post asks an edge to post m.
func (a *Adapter) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	res, err := a.op(ctx, wire.Op{Op: wire.OpPost, Thread: t, Message: &m})
	return res.Handle, err
}

// Limits are the edge's, with uploads no larger than a NATS message takes.
func (a *Adapter) Limits() channels.Limits {
	l := a.announcement().limits
	if l.MaxUploadBytes > 0 {
		// Base64 in JSON takes 4 bytes for 3; keep room for the rest.
		if most := int(a.o.Conn.MaxPayload())/4*3 - 64<<10; most > 0 && l.MaxUploadBytes > most {
			l.MaxUploadBytes = most
		}
	}
	return l
}

// opIf performs op where the edges announced its capability (on); else
// it fails for good, as the call of an adapter that lacks it would, and
// asks no edge.
func (a *Adapter) opIf(ctx context.Context, on bool, op wire.Op) (wire.Result, error) {
	if !on {
		return wire.Result{}, channels.Permanent(fmt.Errorf("remote: the edges of %s announced no %s", a.o.Platform, op.Op))
	}
	return a.op(ctx, op)
}

// Edit asks an edge to edit message h.
func (a *Adapter) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	_, err := a.opIf(ctx, a.Caps().Edit, wire.Op{Op: wire.OpEdit, Handle: h, Message: &m})
	return err
}

// Typing asks an edge to show the typing indicator.
func (a *Adapter) Typing(ctx context.Context, t channels.ThreadRef) error {
	_, err := a.opIf(ctx, a.Caps().Typing, wire.Op{Op: wire.OpTyping, Thread: t})
	return err
}

// StopTyping clears the indicator where the edge can; else it fades.
func (a *Adapter) StopTyping(ctx context.Context, t channels.ThreadRef) error {
	if !a.Caps().StopTyping {
		return nil
	}
	_, err := a.op(ctx, wire.Op{Op: wire.OpStopTyping, Thread: t})
	return err
}

// Prompt asks an edge to show c with buttons.
func (a *Adapter) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	res, err := a.opIf(ctx, a.Caps().Prompt, wire.Op{Op: wire.OpPrompt, Thread: t, Choice: &c})
	return res.Handle, err
}

// Upload asks an edge to put f into the thread.
func (a *Adapter) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	res, err := a.opIf(ctx, a.Caps().Upload, wire.Op{Op: wire.OpUpload, Thread: t, Upload: &f})
	return res.Handle, err
}

// SetTitle renames the thread where the edge can; else it does nothing.
func (a *Adapter) SetTitle(ctx context.Context, t channels.ThreadRef, title string) error {
	if !a.Caps().Title {
		return nil
	}
	_, err := a.op(ctx, wire.Op{Op: wire.OpSetTitle, Thread: t, Text: title})
	return err
}

// Cards reports whether the edge shows tool calls as cards.
func (a *Adapter) Cards() bool { return a.Caps().Cards }

// Card asks the edge to show rows as a card.
func (a *Adapter) Card(ctx context.Context, t channels.ThreadRef, h channels.Handle, rows []channels.Message) (channels.Handle, error) {
	res, err := a.opIf(ctx, a.Caps().Card, wire.Op{Op: wire.OpCard, Thread: t, Handle: h, Rows: rows})
	return res.Handle, err
}

// React and Unreact ask an edge to add or remove the app's reaction.
func (a *Adapter) React(ctx context.Context, h channels.Handle, emoji string) error {
	_, err := a.opIf(ctx, a.Caps().React, wire.Op{Op: wire.OpReact, Handle: h, Text: emoji})
	return err
}

func (a *Adapter) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	_, err := a.opIf(ctx, a.Caps().React, wire.Op{Op: wire.OpUnreact, Handle: h, Text: emoji})
	return err
}

// Form asks an edge to show form f.
func (a *Adapter) Form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	res, err := a.opIf(ctx, a.Caps().Form, wire.Op{Op: wire.OpForm, Thread: t, Form: &f})
	return res.Handle, err
}

// SetCommands registers commands where the edge can; else it does nothing.
func (a *Adapter) SetCommands(ctx context.Context, cmds []channels.CommandInfo) error {
	if !a.Caps().Commands {
		return nil
	}
	_, err := a.op(ctx, wire.Op{Op: wire.OpSetCommands, Cmds: cmds})
	return err
}

// MessagesAfter asks an edge for a page of the thread's history, its
// events' callbacks calls to that edge.
func (a *Adapter) MessagesAfter(ctx context.Context, t channels.ThreadRef, after channels.MessageID, limit int) (channels.Page, error) {
	res, err := a.opIf(ctx, a.Caps().History, wire.Op{Op: wire.OpMessagesAfter, Thread: t, After: after, Limit: limit})
	if err != nil || res.Page == nil {
		return channels.Page{}, err
	}
	p := channels.Page{Last: res.Page.Last, More: res.Page.More}
	for _, w := range res.Page.Messages {
		p.Messages = append(p.Messages, a.inbound(w))
	}
	return p, nil
}

// TurnEnded tells an edge that wants to hear it.
func (a *Adapter) TurnEnded(ctx context.Context, t channels.ThreadRef) {
	if !a.Caps().TurnEnd {
		return
	}
	if _, err := a.op(ctx, wire.Op{Op: wire.OpTurnEnded, Thread: t}); err != nil {
		a.o.Log.Warn("remote: turn end", "thread", t, "err", err)
	}
}

// ToolDetail, ShowAgent and ShowSession must not block: they are sent
// without waiting for an answer, and only where the edge shows them.

func (a *Adapter) ToolDetail(t channels.ThreadRef, key string, d channels.ToolDetail) {
	if a.Caps().ToolDetail {
		a.notify(wire.Op{Op: wire.OpToolDetail, Thread: t, Text: key, Detail: &d})
	}
}

func (a *Adapter) ShowAgent(t channels.ThreadRef, agent string) {
	if a.Caps().ShowAgent {
		a.notify(wire.Op{Op: wire.OpShowAgent, Thread: t, Text: agent})
	}
}

func (a *Adapter) ShowSession(t channels.ThreadRef, s channels.SessionInfo) {
	if a.Caps().ShowSession {
		a.notify(wire.Op{Op: wire.OpShowSession, Thread: t, Session: &s})
	}
}

// Check reports whether the worker reaches NATS (and so the edges).
func (a *Adapter) Check() error {
	if !a.o.Conn.IsConnected() {
		return fmt.Errorf("remote: not connected to NATS (%s)", a.o.Conn.Status())
	}
	return nil
}

// notify publishes op with no answer expected, to the thread's edge
// when one is live.
func (a *Adapter) notify(op wire.Op) {
	op.Key = wire.NewKey()
	subj := wire.OpsSubject(a.o.Cluster, a.o.Platform)
	if edge := a.edgeFor(op.Thread); edge != "" {
		subj = wire.EdgeSubject(a.o.Cluster, edge)
	}
	data, err := json.Marshal(op)
	if err == nil {
		err = a.o.Conn.Publish(subj, data)
	}
	if err != nil {
		a.o.Log.Warn("remote: notice to the edge", "op", op.Op, "err", err)
	}
}

// op performs op on one of the platform's edges: a thread's on the edge
// the thread falls to (edgeFor), else, or when that edge does not
// answer, on any.
func (a *Adapter) op(ctx context.Context, op wire.Op) (wire.Result, error) {
	t := op.Thread
	if t == (channels.ThreadRef{}) {
		t = op.Handle.Thread
	}
	if t == (channels.ThreadRef{}) {
		return a.call(ctx, wire.OpsSubject(a.o.Cluster, a.o.Platform), op)
	}
	return a.call(ctx, "", op, t)
}

// call asks subj to perform op under one idempotency key, again (same
// key) while no edge answers or the one performing it is busy, until
// GiveUp; the same operation asked again after that (the lane's retry)
// has the same key (givenUp). With subj "", op is thread's (threads[0]): each try goes to the
// thread's edge (edgeFor; the channel's, where the platform paces posts
// by channel), after a try it did not answer to the queue group. An edge's answer comes back as the error a local adapter
// returns.
func (a *Adapter) call(ctx context.Context, subj string, op wire.Op, threads ...channels.ThreadRef) (wire.Result, error) {
	asks, named := what(op)
	op.Key = a.given.key(asks, named)
	data, err := json.Marshal(op)
	if err != nil {
		return wire.Result{}, channels.Permanent(fmt.Errorf("remote: encode %s: %w", op.Op, err))
	}
	giveUp := time.Now().Add(a.o.GiveUp)
	wait := 50 * time.Millisecond
	// Edges that did not answer a try, and how often: the thread's edge
	// is asked again once (an edge starting again answers within a
	// second; going to the queue group instead is a move, paced until
	// the channel's other operations, answered meanwhile, are Pace old,
	// which they never were in a busy channel), then the queue group.
	unanswered := map[string]int{}
	if len(threads) > 0 && a.announcement().limits.PostsPacedByChannel {
		// The channel's threads share its pacing: one edge performs
		// them all, and they move together.
		threads = []channels.ThreadRef{{Platform: threads[0].Platform, Channel: threads[0].Channel}}
	}
	for {
		to, edge := subj, ""
		if len(threads) > 0 {
			var err error
			edge, err = a.pace(ctx, threads[0], func() string {
				if e := a.edgeFor(threads[0]); e != "" && unanswered[e] < 2 {
					return e
				}
				return "" // any edge of the queue group: paced as a move
			})
			if err != nil {
				return wire.Result{}, fmt.Errorf("remote: %s: %w", op.Op, err)
			}
			to = wire.OpsSubject(a.o.Cluster, a.o.Platform)
			if edge != "" {
				to = wire.EdgeSubject(a.o.Cluster, edge)
				unanswered[edge]++ // until it answers
			}
		}
		actx, cancel := context.WithTimeout(ctx, a.o.Timeout)
		reply, err := a.o.Conn.RequestWithContext(actx, to, data)
		cancel()
		if err != nil && edge != "" && ctx.Err() == nil {
			a.noAnswer(edge)
		}
		if err == nil {
			res, derr := wire.DecodeResult(reply.Data)
			if derr != nil {
				return wire.Result{}, fmt.Errorf("remote: %s: %w", op.Op, derr)
			}
			if len(threads) > 0 && res.Edge != "" {
				a.answered(threads[0], res.Edge)
				delete(unanswered, res.Edge)
			}
			if res.Err == nil || res.Err.Kind != wire.ErrBusy {
				a.given.answered(asks, named)
				return res, res.Err.Err()
			}
			err = errors.New(res.Err.Message)
		}
		if ctx.Err() != nil {
			return wire.Result{}, fmt.Errorf("remote: %s: %w", op.Op, ctx.Err())
		}
		if time.Now().After(giveUp) {
			a.given.gaveUp(asks, named, op.Key)
			return wire.Result{}, fmt.Errorf("remote: %s: no edge of %s performed it: %w", op.Op, a.o.Platform, err)
		}
		a.o.Log.Debug("remote: asking again", "op", op.Op, "key", op.Key, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return wire.Result{}, fmt.Errorf("remote: %s: %w", op.Op, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}
