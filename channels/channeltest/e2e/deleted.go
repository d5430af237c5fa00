package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/workspace"
)

// Git runs git in dir with a fixed identity and no user configuration,
// and returns its output.
func Git(t *testing.T, dir string, args ...string) string {
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

// Deleting a thread on its platform stops its agent, forgets its binding
// and its stored choices and removes its worktree (real git) with its
// branch; deleting the parent channel does the same for each of its
// threads, a worktree's branch with commits kept. Only Ann may prompt
// there: the platform's own word needs no author.
func testDeleteEndsThread(t *testing.T, s Setup) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs git: %v", err)
	}
	repo := t.TempDir()
	Git(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("a repository\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, repo, "add", "README.md")
	Git(t, repo, "commit", "-q", "-m", "start")
	dir := t.TempDir()
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	g := s.start(t, Config{
		Dir:            dir,
		Access:         session.AccessRule{Users: []string{s.UserID(Ann)}},
		Workspaces:     m,
		AgentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Worktree, Cwd: repo} },
	})

	start := func(text string) (channels.ThreadRef, workspace.Info) {
		t.Helper()
		th := g.Mention(Ann, text)
		g.WaitEnd(th)
		info, ok := m.Info(th)
		if !ok || info.Mode != workspace.Worktree {
			t.Fatalf("the workspace of %v = %+v, %v; want a worktree", th, info, ok)
		}
		if err := g.Store.SetChoice(t.Context(), th, "model", "fast"); err != nil {
			t.Fatal(err)
		}
		return th, info
	}
	branches := func() string { return Git(t, repo, "branch", "--list", "acp/*") }
	gone := func(th channels.ThreadRef, info workspace.Info) {
		t.Helper()
		if _, ok, err := g.Store.Binding(t.Context(), th); ok || err != nil {
			t.Errorf("the deleted thread %v is still bound (%v)", th, err)
		}
		if cs, err := g.Store.Choices(t.Context(), th); len(cs) > 0 || err != nil {
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
	Git(t, co.Path, "add", "work.txt")
	Git(t, co.Path, "commit", "-q", "-m", "work")

	s.DeleteThread(t, g.Ctx(), clean)
	g.WaitLog("deleted thread's workspace removed", clean)
	gone(clean, ci)
	if strings.Contains(branches(), ci.Branch) {
		t.Errorf("the clean worktree's branch %s, without commits, was kept: %s", ci.Branch, branches())
	}
	if _, ok, _ := g.Store.Binding(t.Context(), committed); !ok {
		t.Error("deleting one thread forgot another")
	}

	s.DeleteChannel(t, g.Ctx(), committed.Channel)
	g.WaitLog("deleted thread's workspace removed", committed)
	gone(committed, co)
	if !strings.Contains(branches(), co.Branch) {
		t.Errorf("the branch %s with a commit was not kept: %q", co.Branch, branches())
	}
}
