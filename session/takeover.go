package session

// A turn cut off by a worker that went away is asked again, once, by the
// worker that takes the thread over (Router.Adopt).

import (
	"context"
	"slices"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread/owner"
)

// maxTakeOvers is how many times a cut-off prompt is asked again: once,
// so that a prompt that kills workers does not go round them all.
const maxTakeOvers = 1

// takeOver tells the thread of rts, the prompts another worker accepted
// there and did not answer (its running turn's, those queued behind it,
// one whose answer was not delivered), oldest first, once that its
// machine went away, and asks each prompt again in order as the person's
// message (access, queueing, budgets and the session's resumption apply
// as to any message) unless it was asked again before, its mark does not
// keep it, or its author may not prompt there. The mark of a prompt asked
// again is replaced by one that counts the take-over (a worker taking the
// thread over before it is answered says "send it again"), the others
// are cleared.
func (r *Router) takeOver(ctx context.Context, ad channels.Adapter, rts []store.RunningTurn) {
	if len(rts) == 0 {
		return
	}
	again := make([]bool, len(rts))
	n := sysmsg.WorkerLost{}
	for i, rt := range rts {
		again[i] = !rt.Prompt.IsZero() && rt.Attempts < maxTakeOvers && r.mayAskAgain(ctx, rt)
		switch {
		case i == 0:
			n.Again = again[i]
		case again[i]:
			n.Later++
		}
		if again[i] {
			n.Dropped += attach.Dropped(rt.Prompt.Files)
		}
	}
	// The notice goes through the thread's lane, ahead of the answers
	// to the prompts asked again: it waits out rate limits there as the
	// answers do (a worker taking threads over posts in many at once, in
	// channels busy with other threads), and the event that brought the
	// thread here is not held up meanwhile.
	ref := rts[0].Thread
	t := r.threadOf(ref, rts[0].Prompt.Space, ad)
	for t != nil && !t.TakenOver(n) {
		t = r.threadOf(ref, rts[0].Prompt.Space, ad)
	}
	if t == nil {
		// Shutting down: the marks stay as they are, for the next owner.
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), owner.WriteTimeout)
	defer cancel()
	var ask []channels.Inbound
	for i, rt := range rts {
		if !again[i] {
			if err := r.o.Store.ClearTurnRunning(sctx, rt.Thread, rt.Started); err != nil {
				r.log.Warn("cannot clear the running mark of a cut-off turn", "thread", rt.Thread, "err", err)
			}
			r.log.Info("thread taken over: a prompt cut off told", "thread", rt.Thread, "attempts", rt.Attempts)
			continue
		}
		rt.Attempts++
		if err := r.o.Store.MarkTurnRunning(sctx, rt); err != nil {
			r.log.Warn("cannot count the take-over of a cut-off turn", "thread", rt.Thread, "err", err)
		}
		in := rt.Prompt.Inbound(rt.Thread)
		r.mu.Lock()
		if r.retaken == nil {
			r.retaken = map[channels.ThreadRef][]owner.Retaken{}
		}
		r.retaken[rt.Thread] = append(r.retaken[rt.Thread], owner.Retaken{ID: in.ID, Text: in.Text, Started: rt.Started, Attempts: rt.Attempts})
		r.mu.Unlock()
		ask = append(ask, in)
		r.log.Info("thread taken over: a cut-off prompt asked again", "thread", rt.Thread, "attempts", rt.Attempts)
	}
	for _, in := range ask {
		r.Handle(ctx, in)
	}
}

// mayAskAgain reports whether the author of rt's prompt may still prompt
// there (the rules may have changed, or differ on this worker): a prompt
// Handle would refuse is not asked again.
func (r *Router) mayAskAgain(ctx context.Context, rt store.RunningTurn) bool {
	_, acc, _, ok := r.gate(ctx, rt.Prompt.Inbound(rt.Thread))
	return ok && acc.MayPrompt(rt.Prompt.Inbound(rt.Thread))
}

// retake takes what Adopt left for in, a prompt it asked again in ref;
// nil when it is none.
func (r *Router) retake(ref channels.ThreadRef, in channels.Inbound) *owner.Retaken {
	r.mu.Lock()
	defer r.mu.Unlock()
	rts := r.retaken[ref]
	for i, rt := range rts {
		if rt.ID == in.ID && rt.Text == in.Text {
			rts = slices.Delete(rts, i, i+1)
			if len(rts) == 0 {
				delete(r.retaken, ref)
			} else {
				r.retaken[ref] = rts
			}
			return &rt
		}
	}
	return nil
}
