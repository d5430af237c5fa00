package session_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/sandboxtest"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sandbox"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/workspace"
)

// gitRepo makes a git repository with one commit in a new directory.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("these tests need git: %v", err)
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("a repository\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "README.md")
	run("commit", "-q", "-m", "start")
	return dir
}

// workspaceEnv is a gateway whose demo agent has workspace: mode in the
// repository (or directory) cwd, with the MCP server, on a chat that
// takes files of up to 1 MiB.
func workspaceEnv(t *testing.T, mode workspace.Mode, cwd string, change ...func(*agent.Spec)) *env {
	t.Helper()
	dir := t.TempDir()
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	for _, f := range change {
		f(&spec)
	}
	spec.Dir = cwd
	return newEnv(t, envOptions{
		dir:            dir,
		spec:           &spec,
		rec:            channeltest.Options{Upload: true, Edit: true, Limits: channels.Limits{MaxMessageChars: 4000, MaxUploadBytes: 1 << 20}},
		workspaces:     m,
		agentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: mode, Cwd: cwd} },
		mcp:            true,
	})
}

// upload returns the file named name uploaded in th.
func (e *env) upload(th channels.ThreadRef, name string) channels.Upload {
	e.t.Helper()
	e.waitOp(th, "the upload of "+name, func(op channeltest.Op) bool { return op.Op == "upload" && op.File == name })
	for _, m := range e.messages(th, channels.KindFile) {
		if m.File != nil && m.File.Name == name {
			return *m.File
		}
	}
	e.t.Fatalf("no file %s in %s", name, th)
	return channels.Upload{}
}

// TestWorkspaceWorktreePerThread: two threads of a worktree agent work in
// two checkouts of the repository on branches of their own; the file the
// agent writes and sends with the MCP server's send_file reaches each
// thread with its bytes; /workspace shows the path and branch, and /diff
// the change, with the full diff as a file.
func TestWorkspaceWorktreePerThread(t *testing.T) {
	repo := gitRepo(t)
	e := workspaceEnv(t, workspace.Worktree, repo)
	a, b := e.rec.Thread("a"), e.rec.Thread("b")
	e.say(a, ann, "write a file and send it")
	e.say(b, bob, "write a file and send it")
	e.waitEnd(a)
	e.waitEnd(b)
	fa, fb := e.upload(a, "demo-report.txt"), e.upload(b, "demo-report.txt")
	if !strings.HasPrefix(string(fa.Data), "Demo report\n") || fa.Caption != "the demo report" {
		t.Errorf("thread a's file = %q (caption %q)", fa.Data, fa.Caption)
	}
	if string(fa.Data) == string(fb.Data) {
		t.Errorf("both threads got the same report: %q", fa.Data)
	}
	if !strings.Contains(e.text(a), "send_file answered") {
		t.Errorf("thread a's text = %q", e.text(a))
	}
	// Each report is in its thread's checkout, none in the repository.
	if _, err := os.Stat(filepath.Join(repo, "demo-report.txt")); err == nil {
		t.Error("the agent wrote into the shared repository")
	}
	pa, pb := worktreeOf(t, e, a), worktreeOf(t, e, b)
	if pa.Path == pb.Path || pa.Branch == pb.Branch {
		t.Fatalf("the threads share a checkout: %+v and %+v", pa, pb)
	}
	for _, p := range []workspace.Info{pa, pb} {
		if data, err := os.ReadFile(filepath.Join(p.Path, "demo-report.txt")); err != nil || !strings.HasPrefix(string(data), "Demo report") {
			t.Errorf("the report in %s: %q, %v", p.Path, data, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(pa.Path, "demo-report.txt")); string(got) != string(fa.Data) {
		t.Errorf("thread a got %q, its checkout holds %q", fa.Data, got)
	}

	e.command(a, ann, "/workspace")
	e.waitOp(a, "the workspace", hasText("Workspace: `"+pa.Path+"` (a git worktree on branch `"+pa.Branch+"`)"))
	if !strings.HasPrefix(pa.Branch, "acp/write-a-file") {
		t.Errorf("branch = %q, want acp/write-a-file…", pa.Branch)
	}

	e.command(a, ann, "/diff")
	e.waitOp(a, "the diff's stat", hasText("demo-report.txt | 2 ++"))
	patch := e.upload(a, "workspace.diff")
	if !strings.Contains(string(patch.Data), "+Demo report") || !strings.Contains(string(patch.Data), "diff --git a/demo-report.txt") {
		t.Errorf("diff = %q", patch.Data)
	}
}

// worktreeOf returns thread th's workspace, read from the index the
// gateway keeps.
func worktreeOf(t *testing.T, e *env, th channels.ThreadRef) workspace.Info {
	t.Helper()
	m, err := workspace.New(workspace.Options{DataDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	info, ok := m.Info(th)
	if !ok || info.Mode != workspace.Worktree {
		t.Fatalf("thread %s has no worktree: %+v", th, info)
	}
	return info
}

// TestWorkspaceFailedNotice: a worktree agent whose cwd is no git
// repository starts nothing; the thread is told why.
func TestWorkspaceFailedNotice(t *testing.T) {
	e := workspaceEnv(t, workspace.Worktree, t.TempDir())
	th := e.rec.Thread("a")
	e.say(th, ann, "hello")
	e.waitOp(th, "the workspace notice", hasText("Couldn't prepare this thread's workspace, so the agent was not started: "))
	if op := e.waitOp(th, "the workspace notice", hasText("Couldn't prepare")); !strings.Contains(op.Text, "not a git repository") {
		t.Errorf("notice = %q", op.Text)
	}
	select {
	case pid := <-e.spawned:
		t.Errorf("an agent was started (pid %d)", pid)
	default:
	}
}

// TestWorkspaceDirSendFileRefusals: the MCP server refuses what lies
// outside the thread's directory (a path, a symlink out, a device), a fifo
// and a file over the chat's limit, and the agent reads why in the thread; a
// deleted thread's directory is removed.
func TestWorkspaceDirSendFileRefusals(t *testing.T) {
	e := workspaceEnv(t, workspace.Dir, t.TempDir())
	th := e.rec.Thread("a")
	e.say(th, ann, "hello")
	e.waitEnd(th)
	m, err := workspace.New(workspace.Options{DataDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	info, ok := m.Info(th)
	if !ok || info.Mode != workspace.Dir {
		t.Fatalf("no directory for the thread: %+v", info)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(info.Path, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(info.Path, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(info.Path, "big.bin"), make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, why string }{
		{outside, "outside"},
		{"link.txt", "outside"},
		{"/dev/null", "outside"},
		{"pipe", "not a regular file (a fifo)"},
		{"big.bin", "more than the 1048576 bytes"},
	} {
		e.say(th, ann, "send "+tc.path)
		e.waitEnd(th)
		text := e.text(th)
		i := strings.LastIndex(text, "send_file was refused: ")
		if i < 0 || !strings.Contains(text[i:], tc.why) {
			t.Errorf("send %s: the thread reads %q, want a refusal saying %q", tc.path, text[max(i, 0):], tc.why)
		}
	}
	if ups := e.messages(th, channels.KindFile); len(ups) != 0 {
		t.Errorf("files reached the thread: %+v", ups)
	}

	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Closed: true}); err != nil {
		t.Fatal(err)
	}
	e.logs.waitFor(t, e.ctx(), "deleted thread's workspace removed")
	if _, err := os.Stat(info.Path); !os.IsNotExist(err) {
		t.Errorf("the deleted thread's directory is still there: %v", err)
	}
}

// TestReadThreadTool: read_thread gives the agent the thread's messages,
// its own marked as the bot's.
func TestReadThreadTool(t *testing.T) {
	e := workspaceEnv(t, workspace.Shared, t.TempDir())
	th := e.rec.Thread("a")
	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.say(th, ann, "read the thread")
	e.waitEnd(th)
	text := e.text(th)
	i := strings.Index(text, "read_thread answered:")
	if i < 0 {
		t.Fatalf("text = %q", text)
	}
	got := text[i:]
	for _, want := range []string{"user: hello\n", "agent (this bot): ", "user: read the thread\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("read_thread gave %q, want %q in it", got, want)
		}
	}

	// A shared workspace has a path and no diff.
	e.command(th, ann, "/workspace")
	e.waitOp(th, "the workspace", hasText("(shared by the agent's threads)"))
	e.command(th, ann, "/diff")
	e.waitOp(th, "no diff", hasText("No diff: the thread has no workspace of its own"))
}

// TestNoMCPServer: an agent with mcp: false is given no MCP server.
func TestNoMCPServer(t *testing.T) {
	dir := t.TempDir()
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	spec.NoMCP = true
	e := newEnv(t, envOptions{dir: dir, spec: &spec, mcp: true, rec: channeltest.Options{Upload: true, Limits: channels.Limits{MaxMessageChars: 4000, MaxUploadBytes: 1 << 20}}})
	th := e.rec.Thread("a")
	e.say(th, ann, "read the thread")
	e.waitEnd(th)
	if text := e.text(th); !strings.Contains(text, "none of the 0 MCP servers I was given offers read_thread") {
		t.Errorf("text = %q", text)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "mcp")); len(entries) != 0 {
		t.Errorf("sockets opened: %v", entries)
	}
}

// TestWorkspaceSweep: the sweep keeps the workspace of a thread in
// memory and removes one idle past workspace.keep (after a restart, its
// last turn long ago).
func TestWorkspaceSweep(t *testing.T) {
	dir := t.TempDir()
	open := func() *env {
		m, err := workspace.New(workspace.Options{DataDir: dir, Keep: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		spec := demoSpec(filepath.Join(dir, "demo-state"))
		return newEnv(t, envOptions{dir: dir, spec: &spec, workspaces: m,
			agentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Dir} }})
	}
	e := open()
	th := e.rec.Thread("a")
	e.say(th, ann, "hello")
	e.waitEnd(th)
	info := worktreeless(t, dir, th)
	later := time.Now().Add(2 * time.Hour)
	e.r.SweepWorkspaces(e.ctx(), later)
	if _, err := os.Stat(info.Path); err != nil {
		t.Fatalf("the live thread's directory was swept: %v", err)
	}
	e.close()

	e = open()
	e.r.SweepWorkspaces(e.ctx(), later)
	if _, err := os.Stat(info.Path); !os.IsNotExist(err) {
		t.Errorf("the idle thread's directory is still there: %v", err)
	}
	if !strings.Contains(e.logs.String(), "idle thread's workspace removed") {
		t.Errorf("log:\n%s", e.logs.String())
	}
}

// worktreeless returns thread th's directory (workspace: dir) from the
// index in dataDir.
func worktreeless(t *testing.T, dataDir string, th channels.ThreadRef) workspace.Info {
	t.Helper()
	m, err := workspace.New(workspace.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	info, ok := m.Info(th)
	if !ok || info.Mode != workspace.Dir {
		t.Fatalf("thread %s has no directory: %+v", th, info)
	}
	return info
}

// TestSharedWorkspaceNeverRootOrHome: a shared workspace that is / (a
// systemd unit without WorkingDirectory) or the gateway's home starts no
// agent; the thread is told why and what to set.
func TestSharedWorkspaceNeverRootOrHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, cwd := range []string{"/", home} {
		t.Run(cwd, func(t *testing.T) {
			e := workspaceEnv(t, workspace.Shared, cwd)
			th := e.rec.Thread("a")
			e.say(th, ann, "hello")
			op := e.waitOp(th, "the workspace notice", hasText("Couldn't prepare this thread's workspace, so the agent was not started: "))
			if !strings.Contains(op.Text, "not / or the gateway's home directory") || !strings.Contains(op.Text, "agents.list.NAME.cwd") {
				t.Errorf("notice = %q", op.Text)
			}
			select {
			case pid := <-e.spawned:
				t.Errorf("an agent was started (pid %d)", pid)
			default:
			}
		})
	}
}

// TestSendFileWaitsForTheLane: send_file answers the agent once the lane
// has posted the file, or gave it up: the real agent, through the real
// MCP server, reads the platform's refusal instead of "sent".
func TestSendFileWaitsForTheLane(t *testing.T) {
	e := workspaceEnv(t, workspace.Dir, t.TempDir())
	th := e.rec.Thread("a")
	e.rec.Inject(channeltest.InjectUpload, channels.Permanent(errors.New("40005 request entity too large")))
	e.say(th, ann, "write a file and send it")
	e.waitEnd(th)
	text := e.text(th)
	if !strings.Contains(text, "send_file was refused: ") || !strings.Contains(text, "40005 request entity too large") {
		t.Errorf("the thread reads %q, want the agent told of the platform's refusal", text)
	}
	e.say(th, ann, "write a file and send it")
	e.waitEnd(th)
	if text := e.text(th); !strings.Contains(text, "send_file answered") || !strings.Contains(text, "sent demo-report.txt") {
		t.Errorf("the thread reads %q, want the second file sent", text)
	}
}

// TestSendFileInAFinalOnlyTurn: where a final_only turn holds its output
// until it ends, send_file answers once the lane has the file (waiting
// for the post would wait for the turn, which waits for the tool), and
// the file is posted when the turn ends.
func TestSendFileInAFinalOnlyTurn(t *testing.T) {
	dir := t.TempDir()
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	p := session.DefaultPolicy()
	p.Stream.DeliveryMode = projector.DeliveryFinalOnly
	e := newEnv(t, envOptions{
		dir:            dir,
		spec:           &spec,
		rec:            channeltest.Options{Upload: true, Edit: true, Limits: channels.Limits{MaxMessageChars: 4000, MaxUploadBytes: 1 << 20}},
		workspaces:     m,
		agentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Dir} },
		mcp:            true,
		policy:         &p,
	})
	th := e.rec.Thread("a")
	e.say(th, ann, "write a file and send it")
	e.waitEnd(th)
	if f := e.upload(th, "demo-report.txt"); !strings.HasPrefix(string(f.Data), "Demo report") {
		t.Errorf("the file = %q", f.Data)
	}
	if text := e.text(th); !strings.Contains(text, "queued demo-report.txt") {
		t.Errorf("the thread reads %q, want the agent told the file is queued until the turn ends", text)
	}
}

// TestSandboxedWorktreeHasGit: a sandboxed agent whose workspace is a git
// worktree runs git there (its repository's git directory is shown to it,
// read-only): its status and history, not "not a git repository".
func TestSandboxedWorktreeHasGit(t *testing.T) {
	sandboxtest.Require(t)
	repo := gitRepo(t)
	e := workspaceEnv(t, workspace.Worktree, repo, func(spec *agent.Spec) {
		state := filepath.Join(t.TempDir(), "state")
		if err := os.MkdirAll(state, 0o700); err != nil {
			t.Fatal(err)
		}
		*spec = demoSpec(state)
		exe := spec.Command[0]
		spec.Command = append([]string{"/bin/bash", "-c", `{ git status --porcelain; git log -1 --format=%s; } > .git-probe 2>&1; exec "$0" "$@"`}, spec.Command...)
		spec.Sandbox = &sandbox.Spec{Home: state, Exe: exe}
	})
	a := e.rec.Thread("a")
	e.say(a, ann, "hello")
	e.waitEnd(a)
	ws := worktreeOf(t, e, a)
	out, err := os.ReadFile(filepath.Join(ws.Path, ".git-probe"))
	if err != nil {
		t.Fatalf("the agent wrote no probe: %v", err)
	}
	if !strings.Contains(string(out), "start") || strings.Contains(string(out), "fatal") {
		t.Errorf("git in the sandboxed worktree said:\n%s", out)
	}
}
