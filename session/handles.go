package session

// Shared message handles: the running turn's messages that still show a
// tool running are recorded in the store with what they must show if the
// turn is cut off (dispatch.Open), so that whoever takes the thread up
// after the process that posted them died (a worker taking the thread
// over, `gateway run` starting after a crash) edits those same messages
// to their cut-off text instead of leaving them running forever.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/store"
)

// openRecorder writes a thread's open messages as its lane reports them
// (Options.OnOpen), off the lane's goroutine and coalesced: while one
// write is under way, later reports replace each other and only the last
// is written next. Its goroutine runs only while there is something to
// write, on the router's WaitGroup.
type openRecorder struct {
	mu      sync.Mutex
	latest  []dispatch.Open
	dirty   bool // latest is not written yet
	running bool // a goroutine writes
	stored  bool // what the store holds is not empty (as far as known)
}

// report takes the lane's latest open messages of thread t.
func (o *openRecorder) report(t *thread, opens []dispatch.Open) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.latest, o.dirty = opens, true
	if o.running {
		return
	}
	o.running = true
	t.r.wg.Go(func() { o.write(t) })
}

func (o *openRecorder) write(t *thread) {
	for {
		o.mu.Lock()
		if !o.dirty {
			o.running = false
			o.mu.Unlock()
			return
		}
		opens, stored := o.latest, o.stored
		o.dirty = false
		o.mu.Unlock()
		if len(opens) == 0 && !stored {
			continue // nothing recorded, nothing to forget
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.r.ctx), writeTimeout)
		err := t.r.o.Store.SetOpenMessages(ctx, t.ref, storeOpens(opens))
		cancel()
		if err != nil {
			// The next report writes the whole set again.
			t.r.log.Warn("cannot record the messages of the running turn; a crash would leave them running", "thread", t.ref, "err", err)
			continue
		}
		t.r.log.Debug("open messages recorded", "thread", t.ref, "open", len(opens))
		o.mu.Lock()
		o.stored = len(opens) > 0
		o.mu.Unlock()
	}
}

func storeOpens(opens []dispatch.Open) []store.OpenMessage {
	if len(opens) == 0 {
		return nil
	}
	ms := make([]store.OpenMessage, len(opens))
	for i, o := range opens {
		m := store.OpenMessage{Key: o.Key, ID: o.ID, Card: o.Card, Lines: make([]store.OpenLine, len(o.Lines))}
		for j, l := range o.Lines {
			m.Lines[j] = store.OpenLine{Key: l.Key, Text: l.Text}
		}
		ms[i] = m
	}
	return ms
}

// Limits of closeOpenMessages' attempts at one message.
const (
	cutOffAttempts = 3
	cutOffWait     = time.Second // between attempts, unless a rate limit says longer
)

// closeOpenMessages edits each message a cut-off turn of ref left open
// to its cut-off text (the same message; where ad cannot edit it, it is
// left as it is), then forgets them. An edit that keeps failing is
// logged and given up: the message is not tried again. It blocks.
func (r *Router) closeOpenMessages(ctx context.Context, ad channels.Adapter, ref channels.ThreadRef) {
	rctx, cancel := context.WithTimeout(ctx, writeTimeout)
	ms, err := r.o.Store.OpenMessages(rctx, ref)
	cancel()
	if err != nil {
		r.log.Warn("cannot read the messages a cut-off turn left running", "thread", ref, "err", err)
		return
	}
	if len(ms) == 0 {
		return
	}
	ed, _ := channels.As[channels.Editor](ad)
	cd, _ := channels.As[channels.Carder](ad)
	for _, m := range ms {
		h := channels.Handle{Thread: ref, ID: m.ID}
		var edit func(context.Context) error
		switch {
		case m.Card && cd != nil && ed != nil:
			rows := make([]channels.Message, len(m.Lines))
			for i, l := range m.Lines {
				rows[i] = channels.Message{Kind: channels.KindTool, Key: l.Key, Text: l.Text}
			}
			edit = func(ctx context.Context) error { _, err := cd.Card(ctx, ref, h, rows); return err }
		case !m.Card && ed != nil:
			l := m.Lines[0]
			edit = func(ctx context.Context) error {
				return ed.Edit(ctx, h, channels.Message{Kind: channels.KindTool, Key: l.Key, Text: l.Text})
			}
		default:
			continue // this adapter cannot edit it
		}
		if err := editAFewTimes(ctx, edit); err != nil {
			r.log.Warn("cannot show a message of a cut-off turn as cut off; left as it is", "thread", ref, "message", m.ID, "err", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := r.o.Store.SetOpenMessages(sctx, ref, nil); err != nil {
		r.log.Warn("cannot forget the messages of a cut-off turn", "thread", ref, "err", err)
	}
}

// editAFewTimes runs edit up to cutOffAttempts times while it fails (a
// message gone is done with), waiting out a rate limit.
func editAFewTimes(ctx context.Context, edit func(context.Context) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = edit(actx)
		cancel()
		if err == nil || errors.Is(err, channels.ErrMessageGone) || channels.IsPermanent(err) {
			return err
		}
		if attempt == cutOffAttempts || ctx.Err() != nil {
			return err
		}
		wait := cutOffWait
		if rl := (*channels.RateLimitError)(nil); errors.As(err, &rl) && rl.RetryAfter > wait {
			wait = rl.RetryAfter
		}
		if !sleep(ctx, wait) {
			return err
		}
	}
}
