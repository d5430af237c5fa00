package session

// A thread people deleted (channels.Inbound.Closed), and the agent a new
// thread picked (channels.Inbound.Agent).

import (
	"context"
	"slices"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/thread/owner"
)

// close handles a deleted thread: if its author may prompt there, the
// thread is forgotten (drop) on a goroutine the router owns, so the
// handler does not wait for the agent to stop.
func (r *Router) close(ctx context.Context, ad channels.Adapter, acc owner.Access, in channels.Inbound) {
	if !acc.MayPrompt(in) {
		r.refuse(ctx, ad, in)
		return
	}
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		r.drop(in.Thread, thread.DisplayName(in.Author))
	}()
}

// drop ends thread ref for good: its queue is dropped, its running
// turn cancelled (the agent killed after abort.grace if it ignores the
// cancel), its agent process stopped, its owner removed from the router
// and its binding deleted, so that its session is never resumed. The
// thread is told nothing: it is gone. It blocks until all that is done.
func (r *Router) drop(ref channels.ThreadRef, by string) {
	r.mu.Lock()
	t := r.threads[ref]
	if t != nil {
		delete(r.threads, ref)
	}
	r.mu.Unlock()
	if t != nil {
		t.Forget(by, false)
	}
	// After the thread's owner has returned: a session it was still
	// creating has saved its binding by now.
	ctx, cancel := r.detached(4 * owner.WriteTimeout)
	defer cancel()
	st := r.o.Store
	if err := owner.Persist(ctx, r.log, ref, "the deleted thread's binding", func(ctx context.Context) error { return st.DeleteBinding(ctx, ref) }); err != nil {
		r.log.Error("cannot delete the binding of a deleted thread; its session may be resumed", "thread", ref, "err", err)
		return
	}
	if err := owner.Persist(ctx, r.log, ref, "the deleted thread's choices", func(ctx context.Context) error { return st.ClearChoices(ctx, ref) }); err != nil {
		r.log.Error("cannot forget the choices of a deleted thread", "thread", ref, "err", err)
	}
	if err := owner.Persist(ctx, r.log, ref, "the deleted thread's open messages", func(ctx context.Context) error { return st.SetOpenMessages(ctx, ref, nil) }); err != nil {
		r.log.Error("cannot forget the open messages of a deleted thread", "thread", ref, "err", err)
	}
	// Nobody is left to answer: the marks of its prompts go (a restart
	// would tell the deleted thread, another worker ask them again).
	if err := owner.Persist(ctx, r.log, ref, "the deleted thread's running marks", func(ctx context.Context) error { return st.ClearTurnRunning(ctx, ref, time.Time{}) }); err != nil {
		r.log.Error("cannot forget the running marks of a deleted thread", "thread", ref, "err", err)
	}
	r.log.Info("thread deleted: agent stopped and binding forgotten", "thread", ref, "by", by)
	r.removeWorkspace(ref)
}

// pickAllowed checks the agent in.Agent picked for thread t: a name of
// the thread's Policy.Agents (every agent the router can start when that
// is empty). An allowed pick is kept for the thread's first session
// (thread.pick, set by its owner); otherwise the author is told which
// agents they may pick and the message is not run.
func (r *Router) pickAllowed(ctx context.Context, ad channels.Adapter, t *owner.Thread, in channels.Inbound) bool {
	allowed := r.policyFor(t.Ref(), t.Space()).Agents
	_, known := r.agentSpec(in.Agent)
	if known && (len(allowed) == 0 || slices.Contains(allowed, in.Agent)) {
		return true
	}
	r.reply(ad, in, sysmsg.NoSuchAgent{Name: in.Agent, Allowed: allowed})
	return false
}
