package session

// What a cluster worker needs of the router (cmd/gateway's edge and worker
// roles): the access rules judged where no router runs, and a thread given
// up to another worker.

import (
	"context"
	"slices"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/thread/owner"
)

// MayPrompt reports whether in's author may prompt where in was sent, by
// the same rules Router.Admit applies (rules by platform; open lists the
// platforms that admit people themselves), without telling anyone. An
// edge, which runs no router, answers an adapter's Admit with it; the
// worker that gets the event judges it again and tells a refused author.
func MayPrompt(rules map[string]AccessRule, open []string, in channels.Inbound) bool {
	rule, hasRule := rules[in.Thread.Platform]
	if in.Author.Bot && !rule.AllowBots {
		return false
	}
	return owner.Access{Rule: rule, HasRule: hasRule, Open: slices.Contains(open, in.Thread.Platform)}.MayPrompt(in)
}

// Disown drops thread ref from this router without a word in the thread
// and without forgetting its binding: another worker owns it now (its
// lease moved). A running turn is cancelled and the agent stopped, as for
// a deleted thread; the thread's next event, should it come back here,
// resumes it from the store. It blocks until the thread's owner returned.
func (r *Router) Disown(ref channels.ThreadRef) {
	r.mu.Lock()
	t := r.threads[ref]
	if t != nil {
		delete(r.threads, ref)
	}
	r.mu.Unlock()
	if t != nil {
		if t.Event(thread.Forget{}) {
			<-t.Done()
		}
		r.log.Info("thread given up to another worker", "thread", ref)
	}
}

// Adopt takes up thread ref, which this worker just took over from
// another (Options.Shared): the prompts the store still marks there
// (the running turn's, those queued behind it, one whose answer was not
// delivered) were cut off by the worker that took them, so the thread is
// told once (sysmsg.WorkerLost) and each prompt is asked again, once, in
// order (takeOver).
// The binding needs nothing here: the prompt asked again, or else the
// thread's next message, resumes its session from it (session/load where
// the agent can, else a new session, said in the thread). Call it before
// handing the thread's first event to Handle.
func (r *Router) Adopt(ctx context.Context, ref channels.ThreadRef) {
	select {
	case <-r.ready:
	case <-ctx.Done():
		return
	}
	// The last message the worker before handled here: the stream gives
	// it again when the worker that forwarded it died before it could
	// acknowledge it (its partition held up meanwhile, so nothing after
	// it was handled), and it was answered already.
	if id, ok, err := r.o.Store.LastSeen(ctx, ref); err != nil {
		r.log.Warn("cannot read the last message handled in a thread taken over", "thread", ref, "err", err)
	} else if ok {
		r.mu.Lock()
		if r.lastSeen == nil {
			r.lastSeen = map[channels.ThreadRef]channels.MessageID{}
		}
		r.lastSeen[ref] = id
		r.mu.Unlock()
	}
	running, err := r.o.Store.RunningTurns(ctx)
	if err != nil {
		r.log.Warn("cannot read the turns running in a thread taken over", "thread", ref, "err", err)
		return
	}
	r.mu.Lock()
	ad := r.adapters[ref.Platform]
	r.mu.Unlock()
	if ad != nil {
		r.closeOpenMessages(ctx, ad, ref)
	}
	if ad == nil {
		return
	}
	var mine []store.RunningTurn
	for _, rt := range running {
		if rt.Thread == ref {
			mine = append(mine, rt)
		}
	}
	r.takeOver(ctx, ad, mine)
}
