package session

// Each thread's workspace (package workspace) and its MCP server (package
// mcpgate): opened when the thread's agent starts, the workspace being
// the process's directory and the session's cwd; the server closed when
// the thread's owner returns, the workspace removed when the thread is
// deleted or archived (archive.go) or idle past workspace.keep.

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/workspace"
)

// workspaceError is a start that failed because the thread's workspace
// could not be made or opened: the thread is told so (sysmsg.WorkspaceFailed).
type workspaceError struct{ err error }

func (e *workspaceError) Error() string { return e.err.Error() }
func (e *workspaceError) Unwrap() error { return e.err }

// isWorkspaceError reports whether a start failed for its workspace.
func isWorkspaceError(err error) bool {
	_, ok := errors.AsType[*workspaceError](err)
	return ok
}

// sweepEvery is how often idle threads' workspaces are looked at
// (workspace.keep).
const sweepEvery = time.Hour

// noUploadLimit bounds the files send_file reads for a chat that takes
// none: the thread is told the file's name and size in its place.
const noUploadLimit = 8 << 20

// shortName is a thread's short name for its worktree's branch: the
// first words of its first message.
func shortName(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return strings.Join(words[:min(len(words), 6)], "-")
}

// openWorkspace returns the thread's workspace for the agent spec (whose
// Dir it sets; Info.Path is the working directory), making it at first
// use; bound is the cwd its binding recorded ("" none). Without a
// workspace manager, or for an agent in the shared mode, it is the
// binding's cwd or the agent's.
func (t *liveThread) openWorkspace(ctx context.Context, spec *agent.Spec, bound, name string) (workspace.Info, error) {
	shared := bound
	if shared == "" {
		shared = t.d.host.cwd(*spec)
	}
	m, settings := t.d.workspaces, t.d.host.agentWorkspace()
	if m == nil || settings == nil {
		return sharedWorkspace(shared)
	}
	wa := settings(spec.Name)
	if wa.Cwd == "" {
		wa.Cwd = t.d.host.cwd(*spec)
	}
	info, err := m.Open(ctx, wa, t.ref, name)
	if err != nil {
		return workspace.Info{}, &workspaceError{err: err}
	}
	if info.Mode == workspace.Shared {
		return sharedWorkspace(shared)
	}
	spec.Dir = info.Path
	return info, nil
}

// sharedWorkspace returns dir as the root and cwd of a thread in the
// shared mode, or the workspace error for a dir that is / or the
// gateway's home (workspace.CheckShared).
func sharedWorkspace(dir string) (workspace.Info, error) {
	if err := workspace.CheckShared(dir); err != nil {
		return workspace.Info{}, &workspaceError{err: err}
	}
	return workspace.Info{Mode: workspace.Shared, Path: dir, Root: dir}, nil
}

// openMCP returns the thread's MCP server, opening it over root when the
// thread has none yet; nil when the router gives none (Options.MCPDir) or
// the agent takes none (agents.list.NAME.mcp: false), or it cannot be
// opened (logged: the agent starts without it).
func (t *liveThread) openMCP(have *mcpgate.Server, spec agent.Spec, root string) *mcpgate.Server {
	if t.d.mcpDir == "" || spec.NoMCP {
		return nil
	}
	if have != nil {
		return have
	}
	limit := dispatch.UploadLimit(t.ad)
	if limit <= 0 {
		limit = noUploadLimit
	}
	s, err := mcpgate.Open(mcpgate.Options{Dir: t.d.mcpDir, Root: root, MaxFileBytes: int64(limit), Command: t.d.mcpCommand, Logger: t.d.log.With("thread", t.ref)}, mcpThread{t})
	if err != nil {
		// The agent works without it: its tools are missing, nothing else.
		t.d.log.Error("cannot open the thread's MCP server; the agent starts without it", "thread", t.ref, "err", err)
		return nil
	}
	return s
}

// mcpServers is what the session is given: the thread's MCP server, if
// any.
func mcpServers(s *mcpgate.Server) []agent.MCPServer {
	if s == nil {
		return nil
	}
	return []agent.MCPServer{s.MCPServer()}
}

// mcpThread is the thread as the MCP tools act on it (mcpgate.Thread):
// everything goes through the thread's lane, like any output.
type mcpThread struct{ t *liveThread }

// SendFile queues f in the thread's lane (which says the file's name and
// size instead where the chat takes no files, or not this one) and waits
// until the lane has posted it or given it up, or, in a held final_only
// turn, has taken it; f's bytes are released when the lane is done with
// them.
func (m mcpThread) SendFile(ctx context.Context, f mcpgate.File) (bool, error) {
	taken := make(chan bool, 1)
	done := make(chan error, 1)
	r := m.t.runner
	r.FileThen(channels.Upload{Name: f.Name, Data: f.Data, Caption: f.Caption},
		func(held bool) { taken <- held },
		func(err error) { f.Release(); done <- err })
	select {
	case held := <-taken:
		if held {
			return true, nil
		}
	case <-ctx.Done():
		return false, ctx.Err()
	case <-r.Done():
		return false, errors.New("the thread has ended")
	}
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		return false, ctx.Err()
	case <-r.Done():
		return false, errors.New("the thread has ended")
	}
}

// ReadThread asks the owner for the thread's recent messages.
func (m mcpThread) ReadThread(ctx context.Context, limit int) ([]mcpgate.Message, error) {
	reply := make(chan []mcpgate.Message, 1)
	if !m.t.inbox.send(readThreadEv{limit: limit, reply: reply}) {
		return nil, errors.New("the thread has ended")
	}
	select {
	case msgs := <-reply:
		return msgs, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

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

// closeMCP closes the thread's MCP server, if any: the owner returns.
func (t *liveThread) closeMCP() {
	if t.mcp == nil {
		return
	}
	if err := t.mcp.Close(); err != nil {
		t.d.log.Warn("cannot close the thread's MCP server", "thread", t.ref, "err", err)
	}
	t.mcp = nil
}

// recentMessages returns up to limit of the thread's latest messages from
// its transcript, oldest first: what people asked and the agent answered,
// the agent's marked as the bot's.
func (t *liveThread) recentMessages(limit int) []mcpgate.Message {
	if t.tr == nil || limit <= 0 {
		return nil
	}
	var out []mcpgate.Message
	for _, e := range t.tr.Entries() {
		msg, ok := e.Body.(store.Message)
		if !ok || strings.TrimSpace(msg.Text) == "" {
			continue
		}
		m := mcpgate.Message{Author: "user", Time: e.Time, Text: msg.Text}
		if msg.Role == store.RoleAssistant {
			m.Author, m.Bot = "agent", true
		}
		out = append(out, m)
	}
	return out[max(0, len(out)-limit):]
}

// workspaceCommand answers /workspace (ShowWorkspace) or /diff
// (ShowDiff) in t, on a child goroutine (git may take a while), through
// the thread's lane. Neither reads thread state.
func (t *liveThread) workspaceCommand(diff bool) {
	h := t.d.host
	limit := dispatch.UploadLimit(t.ad)
	t.d.wg.Go(func() {
		ctx, cancel := context.WithTimeout(t.ctx, time.Minute)
		defer cancel()
		if !diff {
			t.notice(h.showWorkspace(ctx, t.ref))
			return
		}
		n, patch := h.showDiff(ctx, t.ref, limit)
		t.notice(n)
		if patch != "" {
			t.runner.File(channels.Upload{Name: "workspace.diff", ContentType: "text/x-diff", Data: []byte(patch)})
		}
	})
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
