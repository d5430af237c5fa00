package session

// A thread people archived (channels.Inbound.Archived): its agent stops
// and its workspace is removed, its binding kept.

import (
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/workspace"
)

// archive handles an archived thread on a goroutine the router owns, so
// the handler does not wait for the agent to stop or for git.
func (r *Router) archive(ref channels.ThreadRef) {
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		if ref.Thread == "" { // a channel archived: each of its threads
			for _, t := range r.known(ref) {
				r.archived(t)
			}
			return
		}
		r.archived(ref)
	}()
}

// archived ends thread ref's owner (its running turn cancelled, its
// agent stopped, as for a deleted thread) and removes its workspace: a
// worktree's branch with commits is kept, and so is a worktree with
// changes not committed (logged: a notice in the thread would unarchive
// it). The binding stays: a later message resumes the session, in a new
// workspace. It blocks until all that is done.
func (r *Router) archived(ref channels.ThreadRef) {
	r.mu.Lock()
	t := r.threads[ref]
	if t != nil {
		delete(r.threads, ref)
	}
	r.mu.Unlock()
	if t != nil {
		t.Forget("archived", true)
		r.log.Info("thread archived: agent stopped", "thread", ref)
	}
	if r.o.Workspaces == nil {
		return
	}
	ctx, cancel := r.detached(time.Minute)
	defer cancel()
	rm, err := r.o.Workspaces.Remove(ctx, ref)
	switch {
	case errors.Is(err, workspace.ErrNone):
	case errors.Is(err, workspace.ErrDirty):
		r.log.Warn("the archived thread's worktree has changes not committed; it was kept", "thread", ref, "path", rm.Path, "branch", rm.Branch, "err", err)
	case err != nil:
		r.log.Warn("cannot remove the archived thread's workspace", "thread", ref, "err", err)
	default:
		r.log.Info("archived thread's workspace removed", "thread", ref, "path", rm.Path, "branchKept", rm.BranchKept)
	}
}
