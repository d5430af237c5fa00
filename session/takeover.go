package session

// A turn cut off by a worker that went away is asked again, once, by the
// worker that takes the thread over (Router.Adopt).

import (
	"context"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// retaken is a prompt Adopt handed to its thread again: the turn it
// starts is marked running with attempts, so that a worker taking the
// thread over after this one does not ask it a third time.
type retaken struct {
	id       channels.MessageID
	text     string
	attempts int
}

// maxTakeOvers is how many times a cut-off prompt is asked again: once,
// so that a prompt that kills workers does not go round them all.
const maxTakeOvers = 1

// takeOver tells the thread of rt, a turn cut off on another worker, that
// its machine went away, and asks its prompt again as the person's
// message (access, queueing, budgets and the session's resumption apply
// as to any message) unless it was asked again before or the mark does
// not keep it. The mark is replaced by one that counts the take-over (a
// worker taking the thread over before the prompt's turn begins says
// "send it again"), or cleared when the prompt is not asked again. When
// the thread cannot be told, nothing is done and the mark stays.
func (r *Router) takeOver(ctx context.Context, ad channels.Adapter, rt store.RunningTurn) {
	again := !rt.Prompt.IsZero() && rt.Attempts < maxTakeOvers
	n := sysmsg.WorkerLost{Again: again}
	if again {
		n.Dropped = attach.Dropped(rt.Prompt.Files)
	}
	pctx, cancel := context.WithTimeout(ctx, writeTimeout)
	_, err := ad.Post(pctx, rt.Thread, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(n)})
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
	r.retaken[rt.Thread] = retaken{id: in.ID, text: in.Text, attempts: rt.Attempts}
	r.mu.Unlock()
	r.log.Info("thread taken over: its cut-off turn asked again", "thread", rt.Thread, "attempts", rt.Attempts)
	r.Handle(ctx, in)
}

// attempts returns how many times the turn in starts in ref was taken
// over: the count Adopt left for the prompt it asked again, 0 for any
// other message. The thread's next turn takes what Adopt left.
func (r *Router) attempts(ref channels.ThreadRef, in channels.Inbound) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.retaken[ref]
	if !ok {
		return 0
	}
	delete(r.retaken, ref)
	if rt.id != in.ID || rt.text != in.Text {
		return 0
	}
	return rt.attempts
}

// turnPrompt is what a running mark keeps of in, the message that started
// a turn, with files, its files as read: enough to ask it again.
func turnPrompt(in channels.Inbound, files []channels.File) store.TurnPrompt {
	return store.TurnPrompt{ID: in.ID, Author: in.Author, Text: in.Text, Files: attach.Carry(files), Space: in.Space, Time: in.Time}
}
