package session

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread/owner"
)

// CatchUp configures the answering of messages people sent to threads
// while the gateway was down, or while its connection to a platform that
// tells of new sessions (channels.NewSessions) had none.
type CatchUp struct {
	// Window: at start, and after each new session of such a platform,
	// the threads whose last message was handled this long ago or less
	// (bound or not: a thread whose agent was starting) are read from
	// the message after it. Zero turns the catch-up off.
	Window time.Duration
	// MaxMessages is how many missed messages one thread may have and
	// still get them answered in order; past it the thread is told what
	// was missed and nothing is run. Zero means DefaultCatchUpMessages.
	MaxMessages int
}

// DefaultCatchUpMessages is CatchUp.MaxMessages when unset.
const DefaultCatchUpMessages = 10

// Limits of the catch-up's reading.
const (
	// catchUpPage is how many messages one read asks for.
	catchUpPage = 100
	// catchUpPages bounds the reads of one thread; what lies beyond is
	// counted as "more than" the messages read.
	catchUpPages = 5
	// maxCatchUpWait bounds one wait the platform asks for.
	maxCatchUpWait = 5 * time.Minute
	// maxHeld bounds the live messages held for one thread while its
	// backlog is read; beyond it they are handled at once.
	maxHeld = 100
	// maxCaught bounds the memory of message ids answered by the
	// catch-up (a redelivery or a late live copy is dropped).
	maxCaught = 10000
)

// catching is a thread whose backlog is not read yet: live messages wait
// here so that they are answered after what was sent before them.
type catching struct {
	held []channels.Inbound
}

// catchUpState is the router's catch-up bookkeeping.
type catchUpState struct {
	threads map[channels.ThreadRef]*catching // guarded by Router.mu
	caught  map[string]struct{}              // thread + id answered; guarded by Router.mu
	// platforms holds the live messages of a platform whose connection
	// started a new session while the threads to read are listed
	// (prepareGap); guarded by Router.mu.
	platforms map[string]*catching
	// handled is thread + id of the messages handled live, so that a
	// backlog read after a new session does not answer one again (its
	// seen mark may not be written yet when the threads are listed);
	// guarded by Router.mu.
	handled map[string]struct{}
}

func newCatchUpState() catchUpState {
	return catchUpState{threads: map[channels.ThreadRef]*catching{}, caught: map[string]struct{}{},
		platforms: map[string]*catching{}, handled: map[string]struct{}{}}
}

// markSeen records in as the last message handled in its thread, the
// place the next start's catch-up reads on from.
func (r *Router) markSeen(ctx context.Context, in channels.Inbound) {
	if r.keepsSeen(in) {
		r.markSeenID(ctx, in.Thread, in.ID)
	}
}

// keepsSeen reports whether in is marked seen: a message with an id,
// where the catch-up reads what came since, or on a cluster's worker,
// which marks every message (the next owner of the thread drops one
// given again: Adopt).
func (r *Router) keepsSeen(in channels.Inbound) bool {
	return in.ID != "" && in.Choice == nil && (r.o.CatchUp.Window > 0 || r.o.Shared)
}

func (r *Router) markSeenID(ctx context.Context, t channels.ThreadRef, id channels.MessageID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.o.Store.MarkSeen(ctx, t, id, time.Now()); err != nil {
		r.log.Warn("cannot record the last message seen", "thread", t, "err", err)
	}
}

// prepareCatchUp lists the threads to read and holds their live messages
// until they are read. Run calls it before it lets Handle in, and starts
// the reading with startCatchUp.
func (r *Router) prepareCatchUp(ctx context.Context) map[string][]store.Seen {
	seen := r.seenToCatchUp(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	byPlatform := map[string][]store.Seen{}
	for _, s := range r.catchingLocked(seen, "") {
		byPlatform[s.Thread.Platform] = append(byPlatform[s.Thread.Platform], s)
	}
	return byPlatform
}

// seenToCatchUp lists the threads whose last message was handled within
// the catch-up's window (none when it is off, or on an error, logged).
func (r *Router) seenToCatchUp(ctx context.Context) []store.Seen {
	w := r.o.CatchUp.Window
	if w <= 0 {
		return nil
	}
	seen, err := r.o.Store.SeenSince(ctx, time.Now().Add(-w))
	if err != nil && ctx.Err() == nil {
		r.log.Error("cannot list the threads to catch up on", "err", err)
	}
	return seen
}

// catchingLocked returns the threads of seen to read (of platform, or of
// every platform for ""): those whose adapter reads history, and not
// being read already. It holds their live messages from now on.
func (r *Router) catchingLocked(seen []store.Seen, platform string) []store.Seen {
	var out []store.Seen
	for _, s := range seen {
		if platform != "" && s.Thread.Platform != platform {
			continue
		}
		ad := r.adapters[s.Thread.Platform]
		if _, ok := channels.As[channels.History](ad); !ok || s.MessageID == "" || r.catchUp.threads[s.Thread] != nil {
			continue
		}
		out = append(out, s)
		r.catchUp.threads[s.Thread] = &catching{}
	}
	return out
}

// startCatchUp reads each platform's threads on a goroutine of its own;
// for a platform whose connection tells of new sessions
// (channels.NewSessions), that goroutine then reads the threads again
// after each new session (catchUpSessions).
func (r *Router) startCatchUp(ctx context.Context, byPlatform map[string][]store.Seen) {
	r.mu.Lock()
	ads := maps.Clone(r.adapters)
	r.mu.Unlock()
	for p, ad := range ads {
		threads := byPlatform[p]
		ns, gaps := channels.As[channels.NewSessions](ad)
		_, reads := channels.As[channels.History](ad)
		gaps = gaps && reads && r.o.CatchUp.Window > 0 && !r.o.Shared
		if !gaps {
			ns = nil
		}
		if len(threads) == 0 && !gaps {
			continue
		}
		r.wg.Go(func() {
			r.catchUpPlatform(ctx, ad, ns, threads)
			if gaps {
				r.catchUpSessions(ctx, p, ad, ns)
			}
		})
	}
}

// catchUpSessions reads, after each new session of p's connection, what
// the threads of p received while it had none (a gap: the platform does
// not send it to the new session), as the catch-up at start does: the
// same reading, the same holding of live messages, once per message.
func (r *Router) catchUpSessions(ctx context.Context, p string, ad channels.Adapter, ns channels.NewSessions) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ns.Sessions():
		}
		threads := r.prepareGap(ctx, p)
		r.log.Info("a new platform session: catching up on what its threads received meanwhile", "platform", p, "threads", len(threads))
		r.catchUpPlatform(ctx, ad, ns, threads)
	}
}

// prepareGap lists the threads of platform p to read after a new session
// of its connection and holds their live messages, as prepareCatchUp
// does at start. The platform's live messages wait while the list is
// read (the new session's first ones may come meanwhile); those of
// threads not to read are then handled, in order.
func (r *Router) prepareGap(ctx context.Context, p string) []store.Seen {
	r.mu.Lock()
	r.catchUp.platforms[p] = &catching{}
	r.mu.Unlock()
	seen := r.seenToCatchUp(ctx)
	r.mu.Lock()
	held := r.catchUp.platforms[p].held
	delete(r.catchUp.platforms, p)
	threads := r.catchingLocked(seen, p)
	var release []channels.ThreadRef
	for _, in := range held {
		c := r.catchUp.threads[in.Thread]
		if c == nil {
			c = &catching{}
			r.catchUp.threads[in.Thread] = c
			release = append(release, in.Thread)
		}
		c.held = append(c.held, in)
	}
	r.mu.Unlock()
	for _, ref := range release {
		r.releaseHeld(ctx, ref)
	}
	return threads
}

// hold keeps in for later when its thread's backlog is not read yet, and
// drops it when the catch-up answered it already. It reports whether in
// was taken.
func (r *Router) hold(in channels.Inbound) bool {
	if in.Choice != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if in.ID != "" {
		if _, dup := r.catchUp.caught[caughtKey(in.Thread, in.ID)]; dup {
			r.log.Debug("message answered by the catch-up already", "thread", in.Thread, "id", in.ID)
			return true
		}
	}
	c := r.catchUp.threads[in.Thread]
	if c == nil {
		c = r.catchUp.platforms[in.Thread.Platform]
	}
	if c == nil || len(c.held) >= maxHeld {
		r.handledLocked(in)
		return false
	}
	c.held = append(c.held, in)
	return true
}

// handledLocked remembers that in is handled live, where a catch-up after
// a new session may read it again (notHandled).
func (r *Router) handledLocked(in channels.Inbound) {
	if in.ID == "" || r.o.CatchUp.Window <= 0 || r.o.Shared {
		return
	}
	if len(r.catchUp.handled) >= maxCaught {
		clear(r.catchUp.handled) // bounded: at worst a message is answered twice
	}
	r.catchUp.handled[caughtKey(in.Thread, in.ID)] = struct{}{}
}

// notHandled returns msgs without those handled live already.
func (r *Router) notHandled(ref channels.ThreadRef, msgs []channels.Inbound) []channels.Inbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(msgs, func(in channels.Inbound) bool {
		_, ok := r.catchUp.handled[caughtKey(ref, in.ID)]
		return in.ID != "" && ok
	})
}

func caughtKey(t channels.ThreadRef, id channels.MessageID) string {
	return t.String() + "\x00" + string(id)
}

// catchUpPlatform reads the threads of one adapter once it is connected
// (the backlog read before would miss what arrives until then), the
// thread with live messages waiting first, else the most recent. The new
// sessions ns told of until then are those the reading covers: they are
// taken off ns.
func (r *Router) catchUpPlatform(ctx context.Context, ad channels.Adapter, ns channels.NewSessions, threads []store.Seen) {
	defer func() {
		for _, s := range threads {
			r.releaseHeld(ctx, s.Thread)
		}
	}()
	if !waitConnected(ctx, ad) {
		return
	}
	if ns != nil {
		select {
		case <-ns.Sessions():
		default:
		}
	}
	h, ok := channels.As[channels.History](ad)
	if !ok {
		return // no longer reads history
	}
	for len(threads) > 0 {
		i := r.nextCatchUp(threads)
		s := threads[i]
		threads = append(threads[:i], threads[i+1:]...)
		if !r.catchUpThread(ctx, h, s) {
			// Asked to wait before anything was read: the wait is over,
			// and a thread where people wrote meanwhile goes first.
			threads = append([]store.Seen{s}, threads...)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// nextCatchUp picks the first thread with live messages held, else the
// first.
func (r *Router) nextCatchUp(threads []store.Seen) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range threads {
		if c := r.catchUp.threads[s.Thread]; c != nil && len(c.held) > 0 {
			return i
		}
	}
	return 0
}

// waitConnected waits until ad reports it is connected, if it can tell.
func waitConnected(ctx context.Context, ad channels.Adapter) bool {
	c, ok := channels.As[channels.Checker](ad)
	if !ok {
		return ctx.Err() == nil
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for c.Check() != nil {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// catchUpThread reads what s's thread received after its last message
// seen and answers it, then the live messages held meanwhile. It reports
// false when it read nothing because the platform asked to wait (it
// waited), so that the caller may pick again.
func (r *Router) catchUpThread(ctx context.Context, h channels.History, s store.Seen) bool {
	ref := s.Thread
	msgs, last, complete, err := r.readBacklog(ctx, h, s)
	if errors.Is(err, errWaited) {
		return false
	}
	if ctx.Err() != nil {
		return true
	}
	if err != nil {
		// The mark stays, so the next start tries again.
		r.log.Warn("cannot read the messages sent while the gateway was down", "thread", ref, "err", err)
		r.catchUpNotice(ctx, ref, sysmsg.CatchUpFailed{Err: err.Error()})
		r.releaseHeld(ctx, ref)
		return true
	}
	// Those handled live before (a new session's catch-up reads from
	// the last mark, which may be older) are not answered again; live
	// copies of the others (held meanwhile, or later) are not handled:
	// the backlog has them in the platform's order.
	msgs = r.notHandled(ref, msgs)
	r.forget(ref, msgs)
	run, refused, dropped := r.sortBacklog(ctx, msgs)
	maxN := r.o.CatchUp.MaxMessages
	if maxN <= 0 {
		maxN = DefaultCatchUpMessages
	}
	r.log.Info("caught up on a thread", "thread", ref, "read", len(msgs), "to_run", len(run),
		"dropped_by_stop", dropped, "complete", complete)
	for _, in := range refused {
		r.handle(ctx, in)
	}
	switch {
	case len(run) > maxN || (!complete && len(run) > 0):
		r.catchUpNotice(ctx, ref, sysmsg.CatchUpTooMany{N: len(run), Max: maxN, Complete: complete})
	case len(run) > 0:
		r.catchUpNotice(ctx, ref, sysmsg.CatchUp{N: len(run)})
		for _, in := range run {
			r.handle(ctx, in)
		}
	}
	if last != "" {
		r.markSeenID(ctx, ref, last)
	}
	r.releaseHeld(ctx, ref)
	return true
}

// errWaited: the platform asked to wait before the first read of a
// thread, and the wait is over.
var errWaited = errors.New("waited before the first read")

// readBacklog reads the thread's messages after the last one seen, page by
// page, waiting as long as the platform asks between reads. It returns the
// messages, the id of the last message read, and whether it read to the
// end.
func (r *Router) readBacklog(ctx context.Context, h channels.History, s store.Seen) (msgs []channels.Inbound, last channels.MessageID, complete bool, err error) {
	after := s.MessageID
	for pages := 0; pages < catchUpPages; {
		p, err := h.MessagesAfter(ctx, s.Thread, after, catchUpPage)
		if rl, ok := errors.AsType[*channels.RateLimitError](err); ok && rl.RetryAfter <= maxCatchUpWait {
			if !owner.Sleep(ctx, rl.RetryAfter) {
				return msgs, last, false, ctx.Err()
			}
			if pages == 0 {
				return nil, "", false, errWaited
			}
			continue
		}
		if err != nil {
			return msgs, last, false, err
		}
		pages++
		for _, m := range p.Messages {
			if !m.Author.Self { // the gateway's own: context, never run
				msgs = append(msgs, m)
			}
		}
		if p.Last != "" {
			after, last = p.Last, p.Last
		}
		if !p.More || p.Last == "" {
			return msgs, last, true, nil
		}
	}
	return msgs, last, false, nil
}

// sortBacklog splits a thread's backlog into the messages to run, in
// order, and those of people to refuse. A stop in the backlog (from
// someone who may stop) cancels the messages before it, as it would have
// dropped them from the queue live; it stops nothing that runs now.
// Messages the live path ignores (bots, empty ones) are left out.
func (r *Router) sortBacklog(ctx context.Context, msgs []channels.Inbound) (run, refused []channels.Inbound, dropped int) {
	for _, in := range msgs {
		_, acc, detector, ok := r.gate(ctx, in)
		if !ok || in.Choice != nil || (strings.TrimSpace(in.Text) == "" && len(in.Files) == 0) {
			continue
		}
		if !acc.MayPrompt(in) {
			refused = append(refused, in)
			continue
		}
		if isStop(in, detector) {
			dropped += len(run)
			run = nil
			continue
		}
		run = append(run, in)
	}
	return run, refused, dropped
}

// forget remembers that msgs were dealt with by the catch-up, so that a
// live copy (a redelivery) is not answered again.
func (r *Router) forget(ref channels.ThreadRef, msgs []channels.Inbound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.catchUp.caught)+len(msgs) > maxCaught {
		clear(r.catchUp.caught) // bounded: at worst a late copy is answered
	}
	for _, in := range msgs {
		if in.ID != "" {
			r.catchUp.caught[caughtKey(ref, in.ID)] = struct{}{}
		}
	}
}

// releaseHeld ends the holding of ref's live messages and handles those held,
// in order.
func (r *Router) releaseHeld(ctx context.Context, ref channels.ThreadRef) {
	for {
		r.mu.Lock()
		c := r.catchUp.threads[ref]
		if c == nil || len(c.held) == 0 || ctx.Err() != nil {
			delete(r.catchUp.threads, ref)
			r.mu.Unlock()
			return
		}
		held := c.held
		c.held = nil
		r.mu.Unlock()
		for _, in := range held {
			if !r.caught(in) {
				r.handle(ctx, in)
			}
		}
	}
}

// caught reports whether the catch-up answered in already.
func (r *Router) caught(in channels.Inbound) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.catchUp.caught[caughtKey(in.Thread, in.ID)]
	return in.ID != "" && ok
}

// catchUpNotice posts a system line in ref, outside any turn.
func (r *Router) catchUpNotice(ctx context.Context, ref channels.ThreadRef, n sysmsg.Notice) {
	r.mu.Lock()
	ad := r.adapters[ref.Platform]
	r.mu.Unlock()
	if ad == nil {
		return
	}
	msg := channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(n)}
	err := owner.Patiently(ctx, r.o.Delivery.RetryFor, func(ctx context.Context) error {
		_, err := ad.Post(ctx, ref, msg)
		return err
	})
	if err != nil {
		r.log.Warn("catch-up notice failed", "thread", ref, "err", err)
	}
}

// missed tells a thread that a cluster edge's catch-up read more messages
// than it runs (Inbound.Missed), as catchUpThread does, and records the
// last one read as handled.
func (r *Router) missed(ctx context.Context, in channels.Inbound) {
	m := in.Missed
	r.catchUpNotice(ctx, in.Thread, sysmsg.CatchUpTooMany{N: m.N, Max: m.Max, Complete: m.Complete})
	if m.Last != "" {
		r.markSeenID(ctx, in.Thread, m.Last)
	}
}
