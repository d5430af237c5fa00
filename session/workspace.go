package session

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/workspace"
)

// sweepEvery is how often idle threads' workspaces are looked at
// (workspace.keep).
const sweepEvery = time.Hour

// sweepWorkspaces removes the workspaces of threads idle past
// workspace.keep, every sweepEvery until ctx ends.
func (r *Router) sweepWorkspaces(ctx context.Context) {
	if r.o.Workspaces == nil {
		return
	}
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			r.sweepOnce(ctx, now)
		}
	}
}

// sweepOnce removes, at now, the workspaces of threads idle past
// workspace.keep: a thread held in memory counts as active now; another
// one by its last turn's end (or its binding's last change).
func (r *Router) sweepOnce(ctx context.Context, now time.Time) {
	removed, err := r.o.Workspaces.Sweep(ctx, now, func(ref channels.ThreadRef) time.Time {
		r.mu.Lock()
		_, live := r.threads[ref]
		r.mu.Unlock()
		if live {
			return now
		}
		b, ok, err := r.o.Store.Binding(ctx, ref)
		if err != nil || !ok {
			return time.Time{}
		}
		last := b.Updated
		if turns, err := r.o.Store.Turns(ctx, b.SessionID); err == nil {
			for _, tu := range turns {
				if tu.Ended.After(last) {
					last = tu.Ended
				}
			}
		}
		return last
	})
	for _, rm := range removed {
		r.log.Info("idle thread's workspace removed", "path", rm.Path, "branchKept", rm.BranchKept)
	}
	if err != nil {
		r.log.Warn("idle threads' workspaces kept", "err", err)
	}
}

// removeWorkspace removes the workspace of a deleted thread.
func (r *Router) removeWorkspace(ref channels.ThreadRef) {
	if r.o.Workspaces == nil {
		return
	}
	ctx, cancel := r.detached(time.Minute)
	defer cancel()
	rm, err := r.o.Workspaces.Remove(ctx, ref)
	switch {
	case errors.Is(err, workspace.ErrNone):
	case err != nil:
		r.log.Warn("cannot remove the deleted thread's workspace", "thread", ref, "err", err)
	default:
		r.log.Info("deleted thread's workspace removed", "thread", ref, "path", rm.Path, "branchKept", rm.BranchKept)
	}
}

// showWorkspace is the answer to /workspace.
func (r *Router) showWorkspace(ctx context.Context, ref channels.ThreadRef) sysmsg.WorkspaceShown {
	if m := r.o.Workspaces; m != nil {
		if info, ok := m.Info(ref); ok {
			return sysmsg.WorkspaceShown{Mode: string(info.Mode), Path: info.Path, Branch: info.Branch}
		}
	}
	if b, ok, err := r.o.Store.Binding(ctx, ref); err == nil && ok && b.Cwd != "" {
		return sysmsg.WorkspaceShown{Mode: string(workspace.Shared), Path: b.Cwd}
	}
	return sysmsg.WorkspaceShown{None: true}
}

// showDiff is the answer to /diff and the diff to post ("" none): whole,
// or cut at a line to limit bytes (the chat's upload limit; 0: none, the
// lane says so), the answer then saying how much is left out and how to
// see it all.
func (r *Router) showDiff(ctx context.Context, ref channels.ThreadRef, limit int) (sysmsg.DiffShown, string) {
	m := r.o.Workspaces
	if m == nil {
		return sysmsg.DiffShown{Err: workspace.ErrNone.Error()}, ""
	}
	d, err := m.Diff(ctx, ref)
	switch {
	case errors.Is(err, workspace.ErrNone):
		return sysmsg.DiffShown{Err: workspace.ErrNone.Error()}, ""
	case errors.Is(err, workspace.ErrNotWorktree):
		return sysmsg.DiffShown{Err: workspace.ErrNotWorktree.Error()}, ""
	case err != nil:
		r.log.Warn("cannot diff the thread's worktree", "thread", ref, "err", err)
		return sysmsg.DiffShown{Err: err.Error()}, ""
	case strings.TrimSpace(d.Patch) == "":
		return sysmsg.DiffShown{Empty: true}, ""
	}
	n := sysmsg.DiffShown{Stat: d.Stat}
	if limit > 0 && len(d.Patch) > limit {
		cut := d.Patch[:limit]
		if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
			cut = cut[:i+1]
		}
		n.Shown, n.Total, n.Path, n.Start = len(cut), len(d.Patch), d.Path, d.Start
		return n, cut
	}
	return n, d.Patch
}
