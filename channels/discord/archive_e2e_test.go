package discord

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/workspace"
)

// archiveThread archives a thread as a person (or Discord's
// auto-archive) does: THREAD_UPDATE with thread_metadata.archived.
func (f *fakeDiscord) archiveThread(thread string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.chans[thread]
	c.Archived = true
	f.dispatchLocked("THREAD_UPDATE", channelJSON(c))
}

// logWatch is a slog handler that hands each record's message and
// "thread" attribute to a channel, for a test to wait on what the
// gateway did on a goroutine of its own.
type logWatch struct{ ch chan string }

func (w logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w logWatch) Handle(ctx context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "thread" {
			line += " " + a.Value.String()
		}
		return true
	})
	select {
	case w.ch <- line:
	default: // nobody waits for it
	}
	return nil
}
func (w logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w logWatch) WithGroup(string) slog.Handler      { return w }

// wait returns once a logged line starts with prefix and names thread.
func (w logWatch) wait(t *testing.T, prefix string, thread channels.ThreadRef) {
	t.Helper()
	ctx := testCtx(t)
	for {
		select {
		case line := <-w.ch:
			if strings.HasPrefix(line, prefix) && strings.Contains(line, thread.String()) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("never logged %q for %v", prefix, thread)
		}
	}
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestArchiveRemovesWorkspace: archiving a Discord thread stops its agent
// and removes its worktree (real git): a clean one with its branch, one
// whose branch has commits keeping the branch; a worktree with changes
// not committed is kept. The binding stays: the next message in the
// thread resumes its session, in a new worktree.
func TestArchiveRemovesWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs git: %v", err)
	}
	leaks := channeltest.LeakCheck(t)
	t.Cleanup(leaks)
	f := newFake(t)
	dir := t.TempDir()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("a repository\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "README.md")
	git(t, repo, "commit", "-q", "-m", "start")

	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	ends := sessiontest.NewTurnEnds()
	logs := logWatch{ch: make(chan string, 64)}
	var r *session.Router
	a := f.adapter(t, Options{Admit: func(ctx context.Context, in channels.Inbound) bool { return r.Admit(ctx, in) }})
	r = session.New(session.Options{
		Store:          st,
		EventLogDir:    filepath.Join(dir, "events"),
		Agent:          func(string) (agent.Spec, bool) { return spec, true },
		Cwd:            dir,
		Access:         map[string]session.AccessRule{Platform: {Guilds: []string{f.guild}, Users: []string{ann.ID}}},
		OnTurnEnd:      ends.Record,
		Logger:         slog.New(logs),
		Workspaces:     m,
		AgentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Worktree, Cwd: repo} },
	})
	r.Add(Platform, a)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		st.Close()
	})
	f.waitLive(testCtx(t))

	start := func(text string) (channels.ThreadRef, workspace.Info) {
		t.Helper()
		th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: f.say(ann, f.channel, text, true)}
		if _, ok := ends.Next(testCtx(t), th); !ok {
			t.Fatalf("no turn end in %v; messages:\n%s", th, dumpBot(f, th.Thread))
		}
		info, ok := m.Info(th)
		if !ok || info.Mode != workspace.Worktree {
			t.Fatalf("the workspace of %v = %+v, %v; want a worktree", th, info, ok)
		}
		return th, info
	}
	branches := func() string { return git(t, repo, "branch", "--list", "acp/*") }
	archive := func(th channels.ThreadRef, logged string) {
		t.Helper()
		f.archiveThread(th.Thread)
		logs.wait(t, logged, th)
	}

	clean, ci := start("echo clean")
	committed, co := start("echo committed")
	dirty, di := start("echo dirty")
	if err := os.WriteFile(filepath.Join(co.Path, "work.txt"), []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, co.Path, "add", "work.txt")
	git(t, co.Path, "commit", "-q", "-m", "work")
	if err := os.WriteFile(filepath.Join(di.Path, "draft.txt"), []byte("not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	archive(clean, "archived thread's workspace removed")
	if _, err := os.Stat(ci.Path); !os.IsNotExist(err) {
		t.Errorf("the clean worktree %s is still there (%v)", ci.Path, err)
	}
	if strings.Contains(branches(), ci.Branch) {
		t.Errorf("the clean worktree's branch %s, without commits, was kept: %s", ci.Branch, branches())
	}
	if _, ok := m.Info(clean); ok {
		t.Error("the clean thread still has a workspace")
	}

	archive(committed, "archived thread's workspace removed")
	if _, err := os.Stat(co.Path); !os.IsNotExist(err) {
		t.Errorf("the worktree %s is still there (%v)", co.Path, err)
	}
	if !strings.Contains(branches(), co.Branch) {
		t.Errorf("the branch %s with a commit was not kept: %q", co.Branch, branches())
	}

	archive(dirty, "the archived thread's worktree has changes not committed")
	if b, err := os.ReadFile(filepath.Join(di.Path, "draft.txt")); err != nil || string(b) != "not committed\n" {
		t.Errorf("the dirty worktree's file: %q, %v", b, err)
	}

	// The thread goes on (a post unarchives it): its session resumed, in
	// a new worktree.
	before, ok, err := st.Binding(t.Context(), clean)
	if err != nil || !ok {
		t.Fatalf("the archived thread's binding: %v %v", ok, err)
	}
	f.say(ann, clean.Thread, "echo again", false)
	if _, ok := ends.Next(testCtx(t), clean); !ok {
		t.Fatalf("no turn end after the archive; messages:\n%s", dumpBot(f, clean.Thread))
	}
	after, ok, err := st.Binding(t.Context(), clean)
	if err != nil || !ok || after.SessionID != before.SessionID {
		t.Errorf("binding after the archive = %+v, %v, %v; want session %s", after, ok, err, before.SessionID)
	}
	if info, ok := m.Info(clean); !ok {
		t.Error("no new workspace after the archive")
	} else if _, err := os.Stat(info.Path); err != nil {
		t.Errorf("the new worktree: %v", err)
	}
}
