package session

// A thread people deleted (channels.Inbound.Closed), and the agent a new
// thread picked (channels.Inbound.Agent).

import (
	"context"
	"slices"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// close handles a deleted thread: if its author may prompt there, the
// thread is forgotten (drop) on a goroutine the router owns, so the
// handler does not wait for the agent to stop.
func (r *Router) close(ctx context.Context, ad channels.Adapter, acc access, in channels.Inbound) {
	if !acc.mayPrompt(in) {
		r.refuse(ctx, ad, in)
		return
	}
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		r.drop(in.Thread, displayName(in.Author))
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
		t.forget(by)
	}
	// After the thread's owner has returned: a session it was still
	// creating has saved its binding by now.
	ctx, cancel := context.WithTimeout(context.Background(), 4*writeTimeout)
	defer cancel()
	st := r.o.Store
	if err := r.persist(ctx, ref, "the deleted thread's binding", func(ctx context.Context) error { return st.DeleteBinding(ctx, ref) }); err != nil {
		r.log.Error("cannot delete the binding of a deleted thread; its session may be resumed", "thread", ref, "err", err)
		return
	}
	r.log.Info("thread deleted: agent stopped and binding forgotten", "thread", ref, "by", by)
}

// forget stops everything of the thread (Router.drop) and waits for
// its run loop to return.
func (t *thread) forget(by string) {
	t.mu.Lock()
	t.shutting = true // no further turn starts; a starting agent is stopped
	t.queue = nil
	tu, sess, proc := t.turn, t.sess, t.proc
	if tu != nil && tu.stopper == "" {
		// What the agent still says is not shown (thread.Update).
		tu.stopper, tu.reason = by, stopByPerson
	}
	if t.cancelStart != nil {
		t.cancelStart()
	}
	if t.reaper != nil {
		t.reaper.Stop()
	}
	t.mu.Unlock()
	for _, p := range t.allPending() {
		t.settle(p, store.PromptCancelled, "", channels.Author{Name: by}, sysmsg.Cancelled{By: by})
	}
	if tu != nil && sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = sess.Cancel(ctx)
		cancel()
		timer := time.NewTimer(t.r.o.Abort.Grace)
		select {
		case <-tu.finished:
		case <-timer.C:
			proc.Kill()
			<-tu.finished
		}
		timer.Stop()
		// endTurn leaves the running mark of a thread that is shutting
		// down; nobody is left to tell at the next start.
		ctx, cancel = context.WithTimeout(context.Background(), writeTimeout)
		if err := t.r.o.Store.ClearTurnRunning(ctx, t.ref, tu.started); err != nil {
			t.r.log.Warn("cannot clear the running mark of a deleted thread's turn", "thread", t.ref, "err", err)
		}
		cancel()
	}
	t.end()
	<-t.done
	t.mu.Lock()
	if t.reaper != nil {
		t.reaper.Stop() // armed again by the turn's end
	}
	proc = t.proc
	w := t.dropProcessLocked()
	t.mu.Unlock()
	t.stopProcess(proc, w)
}

// pickAllowed checks the agent in.Agent picked for thread t: a name of
// the thread's Policy.Agents (every agent the router can start when that
// is empty). An allowed pick is kept for the thread's first session
// (thread.pick); otherwise the author is told which agents they may pick
// and the message is not run.
func (r *Router) pickAllowed(ctx context.Context, ad channels.Adapter, t *thread, in channels.Inbound) bool {
	allowed := r.policyFor(t.ref, t.space).Agents
	_, known := r.agentSpec(in.Agent)
	if known && (len(allowed) == 0 || slices.Contains(allowed, in.Agent)) {
		t.mu.Lock()
		t.pick = in.Agent
		t.mu.Unlock()
		return true
	}
	r.reply(ctx, ad, in, sysmsg.NoSuchAgent{Name: in.Agent, Allowed: allowed})
	return false
}
