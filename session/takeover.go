package session

// A turn cut off by a worker that went away is asked again, once, by the
// worker that takes the thread over (Router.Adopt).

import (
	"context"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// retaken is a prompt Adopt handed to its thread again: the turn it
// starts is marked running with attempts, so that a worker taking the
// thread over after this one does not ask it a third time; started is
// the cut-off turn's mark, which stands for it until then.
type retaken struct {
	id       channels.MessageID
	text     string
	started  time.Time
	attempts int
}

// maxTakeOvers is how many times a cut-off prompt is asked again: once,
// so that a prompt that kills workers does not go round them all.
const maxTakeOvers = 1

// takeOver tells the thread of rt, a turn cut off on another worker, that
// its machine went away, and asks its prompt again as the person's
// message (access, queueing, budgets and the session's resumption apply
// as to any message) unless it was asked again before, the mark does not
// keep it, or its author may not prompt there. The mark is replaced by
// one that counts the take-over (a worker taking the thread over before
// the prompt's turn begins says "send it again"; the turn's own mark
// replaces it, or retakeSettled clears it when no turn begins), or
// cleared when the prompt is not asked again. When the thread cannot be
// told, nothing is done and the mark stays.
func (r *Router) takeOver(ctx context.Context, ad channels.Adapter, rt store.RunningTurn) {
	again := !rt.Prompt.IsZero() && rt.Attempts < maxTakeOvers && r.mayAskAgain(ctx, rt)
	n := sysmsg.WorkerLost{Again: again}
	if again {
		n.Dropped = attach.Dropped(rt.Prompt.Files)
	}
	// A rate limit is waited out: the worker taking threads over posts in
	// many at once, and a notice refused would leave the prompt unasked.
	pctx, cancel := context.WithTimeout(ctx, writeTimeout)
	err := postWithin(pctx, ad, rt.Thread, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(n)})
	cancel()
	if err != nil {
		r.log.Warn("cannot tell a thread taken over that its turn was cut off", "thread", rt.Thread, "err", err)
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if !again {
		if err := r.o.Store.ClearTurnRunning(sctx, rt.Thread, rt.Started); err != nil {
			r.log.Warn("cannot clear the running mark of a cut-off turn", "thread", rt.Thread, "err", err)
		}
		r.log.Info("thread taken over: its cut-off turn told", "thread", rt.Thread, "attempts", rt.Attempts)
		return
	}
	rt.Attempts++
	if err := r.o.Store.MarkTurnRunning(sctx, rt); err != nil {
		r.log.Warn("cannot count the take-over of a cut-off turn", "thread", rt.Thread, "err", err)
	}
	in := rt.Prompt.Inbound(rt.Thread)
	r.mu.Lock()
	if r.retaken == nil {
		r.retaken = map[channels.ThreadRef]retaken{}
	}
	r.retaken[rt.Thread] = retaken{id: in.ID, text: in.Text, started: rt.Started, attempts: rt.Attempts}
	r.mu.Unlock()
	r.log.Info("thread taken over: its cut-off turn asked again", "thread", rt.Thread, "attempts", rt.Attempts)
	r.Handle(ctx, in)
}

// mayAskAgain reports whether the author of rt's prompt may still prompt
// there (the rules may have changed, or differ on this worker): a prompt
// Handle would refuse is not asked again.
func (r *Router) mayAskAgain(ctx context.Context, rt store.RunningTurn) bool {
	_, acc, _, ok := r.gate(ctx, rt.Prompt.Inbound(rt.Thread))
	return ok && acc.mayPrompt(rt.Prompt.Inbound(rt.Thread))
}

// retake takes what Adopt left for the thread when in, the message the
// owner is about to prompt with, is the prompt Adopt asked again; any
// other message the thread gets first ends the wait for it.
func (t *thread) retake(in channels.Inbound) {
	t.r.mu.Lock()
	rt, ok := t.r.retaken[t.ref]
	delete(t.r.retaken, t.ref)
	t.r.mu.Unlock()
	if ok && rt.id == in.ID && rt.text == in.Text {
		t.retaking = &rt
	}
}

// attempts is how many times the turn beginning now was taken over: the
// count Adopt left for the prompt it asked again, 0 for any other. The
// prompt's turn begins: the wait for it is over.
func (t *thread) attempts() int {
	rt := t.retaking
	t.retaking = nil
	if rt == nil {
		return 0
	}
	return rt.attempts
}

// retakeSettled clears the cut-off turn's mark once the prompt asked again
// is neither starting nor queued and began no turn (its start failed, it
// was stopped, refused or held): nothing runs that another worker would
// have to answer, or a drain wait for.
func (t *thread) retakeSettled() {
	if t.m.Active() || t.m.Queued() > 0 {
		return
	}
	rt := t.retaking
	t.retaking = nil
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := t.r.o.Store.ClearTurnRunning(ctx, t.ref, rt.started); err != nil {
		t.r.log.Warn("cannot clear the running mark of a cut-off turn", "thread", t.ref, "err", err)
	}
	t.r.log.Info("the cut-off turn asked again began no turn", "thread", t.ref)
}

// turnPrompt is what a running mark keeps of in, the message that started
// a turn, with files, its files as read: enough to ask it again.
func turnPrompt(in channels.Inbound, files []channels.File) store.TurnPrompt {
	return store.TurnPrompt{ID: in.ID, Author: in.Author, Text: in.Text, Files: attach.Carry(files), Space: in.Space, Time: in.Time}
}
