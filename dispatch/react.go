package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/mailbox"
)

// Reactions keeps the gateway's own reaction on people's messages of one
// thread (channels.Reactor): one emoji per message at most, set as a
// wanted state. A new emoji replaces the one shown (removed, then the new
// one added); emoji wanted one after the other before any was shown
// collapse to the last, so a slow or rate-limited platform sees fewer
// calls, never a pile. Reactions have their own rate limits and retries,
// apart from the thread's messages: a reaction refused, failing or slow
// never holds a message back (ReactRunner runs them on a goroutine of
// their own).
//
// Like Lane it is a synchronous state machine that reads no clock: Set
// records what is wanted, Step makes the calls due at now and says when
// to call again. It is not safe for concurrent use.
type Reactions struct {
	r      channels.Reactor
	thread channels.ThreadRef
	log    *slog.Logger

	msgs         []*reaction // in the order first wanted
	blockedUntil time.Time   // a rate limit, or the backoff after a failure
	backoff      time.Duration
}

// reaction is the gateway's reaction on one message.
type reaction struct {
	h     channels.Handle
	want  string // "" none
	shown string // what the platform shows, "" none
	fails int    // failed calls in a row
}

// maxReactFails is how many failed calls in a row give up a message's
// reaction (a rate limit is no failure).
const maxReactFails = 5

// maxReactions bounds the messages remembered; settled ones go first.
const maxReactions = 64

// NewReactions returns the reactions of thread t through r. A nil r
// makes every call a no-op.
func NewReactions(r channels.Reactor, t channels.ThreadRef, log *slog.Logger) *Reactions {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reactions{r: r, thread: t, log: log}
}

// Set wants emoji on message h ("" wants none of the gateway's).
func (s *Reactions) Set(h channels.Handle, emoji string) {
	if s.r == nil || !h.Known() {
		return
	}
	for _, m := range s.msgs {
		if m.h.ID == h.ID {
			m.want, m.fails = emoji, 0
			return
		}
	}
	s.prune()
	s.msgs = append(s.msgs, &reaction{h: h, want: emoji})
}

// prune forgets settled messages (then the oldest) beyond maxReactions.
func (s *Reactions) prune() {
	for i := 0; len(s.msgs) >= maxReactions && i < len(s.msgs); {
		if s.msgs[i].want == s.msgs[i].shown {
			s.msgs = append(s.msgs[:i], s.msgs[i+1:]...)
			continue
		}
		i++
	}
	if len(s.msgs) >= maxReactions {
		s.msgs = s.msgs[1:]
	}
}

// Shown returns the emoji the gateway's reaction on message id shows, ""
// none (for tests).
func (s *Reactions) Shown(id channels.MessageID) string {
	for _, m := range s.msgs {
		if m.h.ID == id {
			return m.shown
		}
	}
	return ""
}

// Idle reports whether every wanted reaction is shown (or given up).
func (s *Reactions) Idle() bool {
	for _, m := range s.msgs {
		if m.want != m.shown {
			return false
		}
	}
	return true
}

// Step makes the calls due at now, one after the other, and returns when
// to call again (zero: only after the next Set).
func (s *Reactions) Step(ctx context.Context, now time.Time) time.Time {
	for ctx.Err() == nil {
		if now.Before(s.blockedUntil) {
			return s.blockedUntil
		}
		m := s.next()
		if m == nil {
			return time.Time{}
		}
		remove := m.shown != ""
		emoji := m.shown
		if !remove {
			emoji = m.want
		}
		cctx, cancel := context.WithTimeout(ctx, reactTimeout)
		var err error
		if remove {
			err = s.r.Unreact(cctx, m.h, emoji)
		} else {
			err = s.r.React(cctx, m.h, emoji)
		}
		cancel()
		if rl, ok := errors.AsType[*channels.RateLimitError](err); ok {
			s.blockedUntil = now.Add(max(rl.RetryAfter, 100*time.Millisecond))
			s.log.Debug("reaction rate limited", "thread", s.thread, "retry_after", rl.RetryAfter, "scope", rl.Scope)
			continue
		}
		if err != nil {
			m.fails++
			if m.fails >= maxReactFails || channels.IsPermanent(err) || errors.Is(err, channels.ErrMessageGone) {
				s.log.Warn("reaction given up", "thread", s.thread, "message", m.h.ID, "emoji", emoji, "err", err)
				m.want, m.shown = "", ""
				continue
			}
			s.backoff = min(max(2*s.backoff, minBackoff), maxBackoff)
			s.blockedUntil = now.Add(s.backoff)
			s.log.Debug("reaction failed; retrying", "thread", s.thread, "emoji", emoji, "retry_in", s.backoff, "err", err)
			continue
		}
		s.backoff, m.fails = 0, 0
		if remove {
			m.shown = ""
		} else {
			m.shown = emoji
		}
	}
	return time.Time{}
}

// next returns the first message whose reaction is not what is wanted.
func (s *Reactions) next() *reaction {
	for _, m := range s.msgs {
		if m.want != m.shown {
			return m
		}
	}
	return nil
}

// reactTimeout bounds one reaction call.
const reactTimeout = 10 * time.Second

// ReactRunner runs one thread's Reactions on its own goroutine with real
// timers. Set never blocks. The zero value is not usable; use
// StartReactions.
type ReactRunner struct {
	s *Reactions

	ctx  context.Context
	sets *mailbox.Box[reactSet]
	done chan struct{} // closed when the goroutine returned
}

type reactSet struct {
	h     channels.Handle
	emoji string
}

// StartReactions starts a runner for s; it stops when ctx is done or
// Close is called. The caller owns it and must call Close.
func StartReactions(ctx context.Context, s *Reactions) *ReactRunner {
	r := &ReactRunner{s: s, ctx: ctx, sets: mailbox.New[reactSet](), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		mailbox.Run(ctx, r.sets, (*reactLoop)(r))
	}()
	return r
}

// Set wants emoji on message h; see Reactions.Set.
func (r *ReactRunner) Set(h channels.Handle, emoji string) { r.sets.Put(reactSet{h, emoji}) }

// Close stops the runner and waits for its goroutine; reactions not yet
// shown are dropped.
func (r *ReactRunner) Close() {
	r.sets.Close()
	<-r.done
}

// reactLoop is the ReactRunner as mailbox.Run drives it.
type reactLoop ReactRunner

func (r *reactLoop) Handle(_ time.Time, e reactSet) { r.s.Set(e.h, e.emoji) }

func (r *reactLoop) Step(now time.Time) time.Time { return r.s.Step(r.ctx, now) }

func (r *reactLoop) Done() bool { return false }

// ReactionsFor starts the reaction runner of thread t where ad reacts
// (channels.Reactor); nil where it does not.
func ReactionsFor(ctx context.Context, ad channels.Adapter, t channels.ThreadRef, log *slog.Logger) *ReactRunner {
	re, ok := channels.As[channels.Reactor](ad)
	if !ok {
		return nil
	}
	return StartReactions(ctx, NewReactions(re, t, log))
}
