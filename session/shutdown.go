package session

import (
	"context"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread/owner"
)

// maxInterruptedAge is how old a cut-off turn may be for the thread to be
// told at a start; an older mark is dropped without a word.
const maxInterruptedAge = 7 * 24 * time.Hour

// tellInterrupted tells each thread where an earlier run left prompts
// marked (its turn running, or prompts taken and not answered) that it
// was cut off, once per thread, and forgets the thread's marks once it
// has been told. A post that fails is tried again, less and less often,
// while the router runs; the marks stay for the next start otherwise.
func (r *Router) tellInterrupted(ctx context.Context, running []store.RunningTurn) {
	var threads []channels.ThreadRef
	marks := map[channels.ThreadRef][]store.RunningTurn{}
	for _, rt := range running {
		if time.Since(rt.Started) > maxInterruptedAge {
			// Nobody waits for that answer any more.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), owner.WriteTimeout)
			err := r.o.Store.ClearTurnRunning(sctx, rt.Thread, rt.Started)
			cancel()
			if err != nil {
				r.log.Warn("cannot clear the running mark of a cut-off turn", "thread", rt.Thread, "err", err)
			}
			continue
		}
		if _, ok := marks[rt.Thread]; !ok {
			threads = append(threads, rt.Thread)
		}
		marks[rt.Thread] = append(marks[rt.Thread], rt)
	}
	for _, th := range threads {
		rts := marks[th]
		r.mu.Lock()
		ad := r.adapters[th.Platform]
		r.mu.Unlock()
		if ad == nil {
			r.log.Warn("a turn was cut off by a restart in a thread of a platform that is not enabled now", "thread", th)
			continue
		}
		m := channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(sysmsg.Interrupted{AtStart: true})}
		r.wg.Go(func() {
			r.closeOpenMessages(ctx, ad, th)
			told := r.retry(ctx, th, "tell a thread its turn was cut off by the restart", func(ctx context.Context) error {
				_, err := ad.Post(ctx, th, m)
				return err
			})
			if !told {
				return
			}
			r.markCutOff(ctx, ad, rts)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), owner.WriteTimeout)
			defer cancel()
			for _, rt := range rts {
				if err := r.o.Store.ClearTurnRunning(sctx, rt.Thread, rt.Started); err != nil {
					r.log.Warn("cannot clear the running mark of a cut-off turn", "thread", rt.Thread, "err", err)
				}
			}
		})
	}
}

// markCutOff gives the messages of turns a restart cut off the stopped
// reaction in place of "taken" or "queued", where their thread has
// reactions: 👀 would otherwise stay on them for good.
func (r *Router) markCutOff(ctx context.Context, ad channels.Adapter, rts []store.RunningTurn) {
	re, ok := channels.As[channels.Reactor](ad)
	if !ok {
		return
	}
	for _, rt := range rts {
		if rt.Prompt.ID == "" || !r.policyFor(rt.Thread, rt.Prompt.Space).Reactions.On() {
			continue
		}
		h := channels.Handle{Thread: rt.Thread, ID: rt.Prompt.ID}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), owner.WriteTimeout)
		for _, old := range []string{channels.ReactTaken, channels.ReactQueued} {
			_ = re.Unreact(rctx, h, old) // not there is fine
		}
		if err := re.React(rctx, h, channels.ReactStopped); err != nil {
			r.log.Warn("cannot mark a cut-off turn's message as stopped", "thread", rt.Thread, "err", err)
		}
		cancel()
	}
}

// Limits of Router.retry: about ten minutes in all.
const (
	firstRetry    = 500 * time.Millisecond
	maxRetry      = time.Minute
	retryAttempts = 16
)

// retry runs f until it succeeds, or it fails with channels.ErrMessageGone
// (there is nothing left to do); it reports whether it is done. It gives
// up (false) when ctx ends or after retryAttempts, leaving the work to the
// next start. The delay between attempts doubles up to maxRetry and
// honours a rate limit's. Each failure is logged with what was being
// done. It blocks; callers run it on a goroutine the router owns.
func (r *Router) retry(ctx context.Context, th channels.ThreadRef, what string, f func(context.Context) error) bool {
	delay := firstRetry
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(actx)
		cancel()
		if err == nil || errors.Is(err, channels.ErrMessageGone) {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if attempt == retryAttempts {
			r.log.Warn("cannot "+what+"; giving up until the next start", "thread", th, "attempts", attempt, "err", err)
			return false
		}
		wait := delay
		if rl := (*channels.RateLimitError)(nil); errors.As(err, &rl) && rl.RetryAfter > wait {
			wait = rl.RetryAfter
		}
		r.log.Warn("cannot "+what+"; trying again", "thread", th, "attempt", attempt, "in", wait, "err", err)
		if !owner.Sleep(ctx, wait) {
			return false
		}
		delay = min(2*delay, maxRetry)
	}
}
