package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/internal/sandboxtest"
	"github.com/acpgw/gateway/sandbox"
)

// gitProbe runs in a thread's worktree, in the sandbox: "OK what" for
// each git use of its own that works, "LEAK what" for each change to the
// operator's repository, or sight of another thread's worktree, that it
// got.
const gitProbe = `
git status --porcelain >/dev/null && echo "OK status"
git log --oneline | grep -q first && echo "OK log"
echo changed > README && git diff --stat | grep -q README && echo "OK diff"
git checkout -q -- README && echo "OK checkout"
git read-tree HEAD && echo "OK index"
git commit -q --allow-empty -m mine 2>/dev/null && echo "LEAK commit"
(echo "touch /tmp/pwned" > "$COMMON/hooks/post-checkout") 2>/dev/null && echo "LEAK hooks"
git config core.hooksPath /tmp 2>/dev/null && echo "LEAK config"
(echo "* filter=x" > "$COMMON/info/attributes") 2>/dev/null && echo "LEAK info"
git branch -q -f main HEAD~0 2>/dev/null && echo "LEAK branch"
[ -e "$COMMON/worktrees/other" ] && echo "LEAK the other worktree"
echo "OK probed"
`

// TestWorktreeGit: an agent whose workspace is a git worktree uses git
// there (status, log, diff, checkout, its index), but cannot commit nor
// change the repository's branches, configuration, hooks or attributes,
// which git would use in the operator's own checkout, nor see the other
// threads' worktrees; unless the operator lists the repository's git
// directory in ReadWrite, when its commits land on the branch.
func TestWorktreeGit(t *testing.T) {
	sandboxtest.Require(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	env := []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}
	git := func(dir string, args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", dir}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	root := t.TempDir()
	repo, data := filepath.Join(root, "repo"), filepath.Join(root, "data")
	os.MkdirAll(repo, 0o700)
	git(repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "README"), []byte("hello\n"), 0o600)
	git(repo, "add", "README")
	git(repo, "commit", "-q", "-m", "first")
	ws, other := filepath.Join(data, "ws", "t1"), filepath.Join(data, "ws", "other")
	git(repo, "worktree", "add", "-q", "-b", "acp/t1", ws)
	git(repo, "worktree", "add", "-q", "-b", "acp/other", other)
	common := filepath.Join(repo, ".git")
	own := git(ws, "rev-parse", "--absolute-git-dir")
	head := git(repo, "rev-parse", "main")

	probe := func(t *testing.T, spec sandbox.Spec) string {
		t.Helper()
		w, err := spec.Wrap(t.Context(), sandbox.Proc{Command: []string{"/bin/bash", "-c", gitProbe}, Env: append(env, "COMMON="+common)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		return run(t, exec.Command(w.Args[0], w.Args[1:]...), w.Env)
	}
	t.Run("read-only repository", func(t *testing.T) {
		out := probe(t, sandbox.Spec{Home: filepath.Join(data, "home"), Hide: []string{data}, Workspace: ws, Git: sandbox.Git{Common: common, Own: own}})
		if strings.Contains(out, "LEAK") {
			t.Errorf("the agent changed the repository or saw another worktree:\n%s", out)
		}
		for _, want := range []string{"OK status", "OK log", "OK diff", "OK checkout", "OK index", "OK probed"} {
			if !strings.Contains(out, want) {
				t.Errorf("the agent could not use git in its worktree (%q):\n%s", want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(common, "hooks", "post-checkout")); err == nil {
			t.Error("the agent wrote a hook into the operator's repository")
		}
		if got := git(repo, "rev-parse", "main"); got != head {
			t.Errorf("main moved to %s", got)
		}
	})
	t.Run("repository granted", func(t *testing.T) {
		out := probe(t, sandbox.Spec{Home: filepath.Join(data, "home"), Hide: []string{data}, Workspace: ws, ReadWrite: []string{common}, Git: sandbox.Git{Common: common, Own: own}})
		if !strings.Contains(out, "LEAK commit") {
			t.Errorf("with the repository granted the agent could not commit:\n%s", out)
		}
		if got := git(repo, "log", "-1", "--format=%s", "acp/t1"); got != "mine" {
			t.Errorf("the branch's last commit is %q, want the agent's", got)
		}
	})
}
