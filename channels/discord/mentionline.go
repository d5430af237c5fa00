package discord

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// A burst of mentions in a channel (a team asking at once) opens more
// threads than Discord's limits let through at once: the global limit of
// 50 requests a second, and the channel's thread bucket. No mention may
// be lost to that. Each mention of a channel that opens a thread takes
// its place in the channel's line (mentionLines) as the gateway delivers
// it; the first of the line waits until the limiter admits its request
// (waiting out the limits, never drawing a 429 it could foresee), and
// leaves the line the moment its request is sent, so that the next one's
// request follows without waiting for the answer. A mention keeps
// trying, through rate limits and an unreachable Discord, for as long as
// Options.RetryFor (delivery.retryFor).

// mentionLines are the lines of mentions waiting to open their thread,
// per channel. It is safe for concurrent use.
type mentionLines struct {
	mu    sync.Mutex              // guards lines
	lines map[string]*mentionLine // by channel
}

// mentionLine is one channel's line.
type mentionLine struct {
	waiting []*mentionTurn // first come first
	change  chan struct{}  // closed and replaced when one leaves
}

// mentionTurn is one mention's place in its channel's line.
type mentionTurn struct {
	channel string
	since   time.Time // when it joined: its retries are counted from then
}

func newMentionLines() *mentionLines {
	return &mentionLines{lines: map[string]*mentionLine{}}
}

// join puts a mention of channel at the end of the channel's line.
func (m *mentionLines) join(channel string) *mentionTurn {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lines[channel]
	if l == nil {
		l = &mentionLine{change: make(chan struct{})}
		m.lines[channel] = l
	}
	t := &mentionTurn{channel: channel, since: time.Now()}
	l.waiting = append(l.waiting, t)
	return t
}

// leave takes t out of its line, if still in it; the next ones move up.
func (m *mentionLines) leave(t *mentionTurn) {
	if t == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lines[t.channel]
	if l == nil {
		return
	}
	for i, o := range l.waiting {
		if o == t {
			l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
			close(l.change)
			l.change = make(chan struct{})
			break
		}
	}
	if len(l.waiting) == 0 {
		delete(m.lines, t.channel)
	}
}

// ahead returns how many mentions are ahead of t in its line, and a
// channel closed when that may have changed; -1 when t left the line.
func (m *mentionLines) ahead(t *mentionTurn) (int, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lines[t.channel]
	if l == nil {
		return -1, nil
	}
	for i, o := range l.waiting {
		if o == t {
			return i, l.change
		}
	}
	return -1, nil
}

// waitFirst waits until no mention is ahead of t (or t left its line).
func (m *mentionLines) waitFirst(ctx context.Context, t *mentionTurn) error {
	for {
		n, change := m.ahead(t)
		if n <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-change:
		}
	}
}

// admittedKey carries, in a request's context, what the transport calls
// once the limiter admitted the request (see withAdmitted).
type admittedKey struct{}

// withAdmitted returns ctx whose requests call f once the limiter has
// admitted them, before they are sent.
func withAdmitted(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, admittedKey{}, f)
}

// admitted calls the function withAdmitted put in ctx, if any.
func admitted(ctx context.Context) {
	if f, ok := ctx.Value(admittedKey{}).(func()); ok {
		f()
	}
}

// Backoff of the retries of a thread while Discord cannot be reached, as
// dispatch's.
const (
	minThreadBackoff = time.Second
	maxThreadBackoff = 30 * time.Second
)

// startThreadPatiently is startThread that waits its turn in the
// channel's line, then waits out rate limits and retries while Discord
// cannot be reached, for as long as Options.RetryFor from the mention's
// arrival. It runs on the mention's inbound lane, so only the mentions
// behind it in its channel wait. It returns the last error when it gives
// up, and at once an error that trying again cannot mend.
func (a *Adapter) startThreadPatiently(ctx context.Context, t *mentionTurn, channel, msg, name string) (string, error) {
	defer a.lines.leave(t)
	sent := withAdmitted(ctx, func() { a.lines.leave(t) })
	var th string
	err := a.patiently(ctx, t.since, func() error {
		if err := a.lines.waitFirst(ctx, t); err != nil {
			return err
		}
		var err error
		th, err = a.startThread(sent, channel, msg, name)
		return err
	})
	return th, err
}

// patiently calls f until it succeeds, waiting out rate limits (until
// the limiter's next change, or the wait they ask) and retrying with a
// backoff while Discord cannot be reached, for as long as
// Options.RetryFor from since. It returns at once an error that trying
// again cannot mend, and the last error when it gives up. It is for what
// a person's message needs before anything else can happen (its thread,
// or the answer that no thread opens), on that message's inbound lane.
func (a *Adapter) patiently(ctx context.Context, since time.Time, f func() error) error {
	deadline := since.Add(a.o.RetryFor)
	backoff := minThreadBackoff
	for {
		changed := a.limits.changed()
		err := f()
		if err == nil || ctx.Err() != nil || channels.IsPermanent(err) {
			return err
		}
		var wait time.Duration
		var rl *channels.RateLimitError
		if errors.As(err, &rl) {
			wait = rl.RetryAfter
		} else {
			wait, backoff = backoff, min(2*backoff, maxThreadBackoff)
			changed = nil // only time mends an unreachable Discord
			a.log.Info("discord: cannot reach Discord; retrying", "retry_in", wait, "err", err)
		}
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		case <-changed:
			timer.Stop()
		}
	}
}

// A mention far back in its channel's line waits seconds for its thread
// (200 threads need at least 12 s at Discord's limits). Its person is told
// the place once, in a reply to the mention, when the wait passes
// busyAfter: a shorter one is hardly noticed, and a reply for each
// mention of a short burst would spend requests the threads need. The
// reply waits its turn under the limits as the threads do, and is given
// up the moment its mention leaves the line (its thread is opening), so
// it never comes after the thread: the channel's message bucket (5 in 5
// s) lets about one mention a second be told, which bounds what a burst
// leaves in the channel.
const busyAfter = 10 * time.Second

// tellBusy tells in's author the place of its mention t in the line
// while t waits there past busyAfter, once. It returns at once; the
// telling runs on a goroutine of its own that ends when t leaves the
// line or ctx ends.
func (a *Adapter) tellBusy(ctx context.Context, t *mentionTurn, in incoming) {
	go func() {
		timer := time.NewTimer(busyAfter - time.Since(t.since))
		defer timer.Stop()
		for {
			n, change := a.lines.ahead(t)
			if n < 0 {
				return // its thread is opening: no word needed
			}
			select {
			case <-ctx.Done():
				return
			case <-change:
				continue
			case <-timer.C:
			}
			break
		}
		err := a.patiently(ctx, t.since, func() error {
			n, _ := a.lines.ahead(t)
			if n < 0 {
				return nil
			}
			return a.answer(ctx, in, sysmsg.Text(sysmsg.Busy{Ahead: n}))
		})
		if err != nil && ctx.Err() == nil {
			a.log.Debug("discord: cannot tell a mention its place in the line", "channel", in.channel, "err", err)
		}
	}()
}
