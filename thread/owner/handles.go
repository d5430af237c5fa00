package owner

// Shared message handles: the running turn's messages that still show a
// tool running are recorded in the store with what they must show if the
// turn is cut off (dispatch.Open), so that whoever takes the thread up
// after the process that posted them died (a worker taking the thread
// over, `gateway run` starting after a crash) edits those same messages
// to their cut-off text instead of leaving them running forever.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/store"
)

// openRecorder writes a thread's open messages as its lane reports them
// (Options.OnOpen), through the thread's saves: a report replaces the one
// before it that is not written yet.
type openRecorder struct {
	stored atomic.Bool // what the store holds is not empty (as far as known)
}

// report takes the lane's latest open messages of thread t.
func (o *openRecorder) report(t *Thread, opens []dispatch.Open) {
	st, ref, log := t.d.Store, t.ref, t.d.Log
	t.saves.write("open messages", "the open messages", func(ctx context.Context) error {
		if len(opens) == 0 && !o.stored.Load() {
			return nil // nothing recorded, nothing to forget
		}
		if err := st.SetOpenMessages(ctx, ref, storeOpens(opens)); err != nil {
			return err
		}
		log.Debug("open messages recorded", "thread", ref, "open", len(opens))
		o.stored.Store(len(opens) > 0)
		return nil
	}, func(err error) {
		// The next report writes the whole set again.
		log.Warn("cannot record the messages of the running turn; a crash would leave them running", "thread", ref, "err", err)
	})
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

// editAFewTimes runs edit up to cutOffAttempts times while it fails (a
// message gone is done with), waiting out a rate limit.
func EditAFewTimes(ctx context.Context, edit func(context.Context) error) error {
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
		if !Sleep(ctx, wait) {
			return err
		}
	}
}
