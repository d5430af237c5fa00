package owner

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
func (t *Thread) openWorkspace(ctx context.Context, spec *agent.Spec, bound, name string) (workspace.Info, error) {
	shared := bound
	if shared == "" {
		shared = t.d.Host.Cwd(*spec)
	}
	m, settings := t.d.Workspaces, t.d.Host.AgentWorkspace()
	if m == nil || settings == nil {
		return sharedWorkspace(shared)
	}
	wa := settings(spec.Name)
	if wa.Cwd == "" {
		wa.Cwd = t.d.Host.Cwd(*spec)
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
func (t *Thread) openMCP(have *mcpgate.Server, spec agent.Spec, root string) *mcpgate.Server {
	if t.d.MCPDir == "" || spec.NoMCP {
		return nil
	}
	if have != nil {
		return have
	}
	limit := dispatch.UploadLimit(t.ad)
	if limit <= 0 {
		limit = noUploadLimit
	}
	s, err := mcpgate.Open(mcpgate.Options{Dir: t.d.MCPDir, Root: root, MaxFileBytes: int64(limit), Command: t.d.MCPCommand, Logger: t.d.Log.With("thread", t.ref)}, mcpThread{t})
	if err != nil {
		// The agent works without it: its tools are missing, nothing else.
		t.d.Log.Error("cannot open the thread's MCP server; the agent starts without it", "thread", t.ref, "err", err)
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
type mcpThread struct{ t *Thread }

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

// closeMCP closes the thread's MCP server, if any: the owner returns.
func (t *Thread) closeMCP() {
	if t.mcp == nil {
		return
	}
	if err := t.mcp.Close(); err != nil {
		t.d.Log.Warn("cannot close the thread's MCP server", "thread", t.ref, "err", err)
	}
	t.mcp = nil
}

// recentMessages returns up to limit of the thread's latest messages from
// its transcript, oldest first: what people asked and the agent answered,
// the agent's marked as the bot's.
func (t *Thread) recentMessages(limit int) []mcpgate.Message {
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
func (t *Thread) workspaceCommand(diff bool) {
	h := t.d.Host
	limit := dispatch.UploadLimit(t.ad)
	t.d.WG.Go(func() {
		ctx, cancel := context.WithTimeout(t.ctx, time.Minute)
		defer cancel()
		if !diff {
			t.notice(h.ShowWorkspace(ctx, t.ref))
			return
		}
		n, patch := h.ShowDiff(ctx, t.ref, limit)
		t.notice(n)
		if patch != "" {
			t.runner.File(channels.Upload{Name: "workspace.diff", ContentType: "text/x-diff", Data: []byte(patch)})
		}
	})
}
