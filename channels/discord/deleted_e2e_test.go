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

// deleteChannel deletes a thread (THREAD_DELETE) or a channel
// (CHANNEL_DELETE) as a person with Manage Threads or Manage Channels
// does; Discord says not who.
func (f *fakeDiscord) deleteChannel(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.chans[id]
	delete(f.chans, id)
	d := channelJSON(c)
	if c.Type == 11 {
		f.dispatchLocked("THREAD_DELETE", map[string]any{"id": c.ID, "guild_id": d["guild_id"], "parent_id": c.Parent, "type": c.Type})
		return
	}
	f.dispatchLocked("CHANNEL_DELETE", d)
}

// TestDeleteEndsThread: deleting a Discord thread stops its agent,
// forgets its binding and its stored choices and removes its worktree
// (real git) with its branch; deleting the parent channel does the same
// for each of its threads, a worktree's branch with commits kept. Only
// ann may prompt there: Discord's own word needs no author.
func TestDeleteEndsThread(t *testing.T) {
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
		if err := st.SetChoice(t.Context(), th, "model", "fast"); err != nil {
			t.Fatal(err)
		}
		return th, info
	}
	branches := func() string { return git(t, repo, "branch", "--list", "acp/*") }
	gone := func(th channels.ThreadRef, info workspace.Info) {
		t.Helper()
		if _, ok, err := st.Binding(t.Context(), th); ok || err != nil {
			t.Errorf("the deleted thread %v is still bound (%v)", th, err)
		}
		if cs, err := st.Choices(t.Context(), th); len(cs) > 0 || err != nil {
			t.Errorf("the deleted thread %v keeps its choices %v (%v)", th, cs, err)
		}
		if _, err := os.Stat(info.Path); !os.IsNotExist(err) {
			t.Errorf("the worktree %s is still there (%v)", info.Path, err)
		}
		if _, ok := m.Info(th); ok {
			t.Errorf("the deleted thread %v still has a workspace", th)
		}
	}

	clean, ci := start("echo clean")
	committed, co := start("echo committed")
	if err := os.WriteFile(filepath.Join(co.Path, "work.txt"), []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, co.Path, "add", "work.txt")
	git(t, co.Path, "commit", "-q", "-m", "work")

	f.deleteChannel(clean.Thread)
	logs.wait(t, "deleted thread's workspace removed", clean)
	gone(clean, ci)
	if strings.Contains(branches(), ci.Branch) {
		t.Errorf("the clean worktree's branch %s, without commits, was kept: %s", ci.Branch, branches())
	}
	if _, ok, _ := st.Binding(t.Context(), committed); !ok {
		t.Error("deleting one thread forgot another")
	}

	f.deleteChannel(f.channel)
	logs.wait(t, "deleted thread's workspace removed", committed)
	gone(committed, co)
	if !strings.Contains(branches(), co.Branch) {
		t.Errorf("the branch %s with a commit was not kept: %q", co.Branch, branches())
	}
}
