package workspace_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/workspace"
)

// gitEnv isolates git from the machine's configuration and gives commits
// an author.
func gitEnv(t *testing.T) {
	t.Helper()
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL":   "/dev/null",
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Test",
		"GIT_AUTHOR_EMAIL":    "test@example.com",
		"GIT_COMMITTER_NAME":  "Test",
		"GIT_COMMITTER_EMAIL": "test@example.com",
	} {
		t.Setenv(k, v)
	}
}

// run runs git in dir and returns its trimmed output.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit holding README.
func newRepo(t *testing.T) string {
	t.Helper()
	gitEnv(t)
	dir := t.TempDir()
	run(t, dir, "init", "--quiet", "-b", "main")
	write(t, filepath.Join(dir, "README"), "hello\n")
	run(t, dir, "add", "README")
	run(t, dir, "commit", "--quiet", "-m", "first")
	return dir
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newManager(t *testing.T, dataDir string, keep time.Duration) *workspace.Manager {
	t.Helper()
	m, err := workspace.New(workspace.Options{DataDir: dataDir, Keep: keep, Log: testlog.FailOnError(t)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ref(thread string) channels.ThreadRef {
	return channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: thread}
}

func TestWorktreePerThread(t *testing.T) {
	repo := newRepo(t)
	data := t.TempDir()
	m := newManager(t, data, 0)
	a := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	one, err := m.Open(t.Context(), a, ref("1.1"), "Fix the login page!")
	if err != nil {
		t.Fatal(err)
	}
	two, err := m.Open(t.Context(), a, ref("2.2"), "fix the LOGIN page")
	if err != nil {
		t.Fatal(err)
	}
	if one.Path == two.Path || one.Path == repo {
		t.Fatalf("paths: %q and %q (repo %q): want two checkouts of their own", one.Path, two.Path, repo)
	}
	if want := filepath.Join(data, "workspaces", "slack", "C1", "1.1"); one.Path != want {
		t.Errorf("path = %q, want %q", one.Path, want)
	}
	if one.Branch != "acp/fix-the-login-page" || two.Branch != "acp/fix-the-login-page-2" {
		t.Errorf("branches = %q, %q; want acp/fix-the-login-page and acp/fix-the-login-page-2", one.Branch, two.Branch)
	}
	if got := run(t, one.Path, "branch", "--show-current"); got != one.Branch {
		t.Errorf("checkout of one is on %q, want %q", got, one.Branch)
	}
	write(t, filepath.Join(one.Path, "README"), "changed in one\n")
	write(t, filepath.Join(one.Path, "new.txt"), "only in one\n")
	if b, _ := os.ReadFile(filepath.Join(two.Path, "README")); string(b) != "hello\n" {
		t.Errorf("two sees README %q, want the original", b)
	}
	if _, err := os.Stat(filepath.Join(two.Path, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("two sees one's new file: %v", err)
	}
	if got := run(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("the main checkout changed: %q", got)
	}
	if got, ok := m.Info(ref("1.1")); !ok || got != one {
		t.Errorf("Info = %+v, %v; want %+v", got, ok, one)
	}
}

func TestWorktreeOfASubdirectory(t *testing.T) {
	repo := newRepo(t)
	if err := os.MkdirAll(filepath.Join(repo, "svc", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "svc", "api", "main.go"), "package main\n")
	run(t, repo, "add", ".")
	run(t, repo, "commit", "--quiet", "-m", "svc")
	if err := os.MkdirAll(filepath.Join(repo, "scratch"), 0o755); err != nil { // not tracked
		t.Fatal(err)
	}
	m := newManager(t, t.TempDir(), 0)
	for _, tc := range []struct{ thread, sub string }{{"1", "svc/api"}, {"2", "scratch"}} {
		ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: filepath.Join(repo, tc.sub)}, ref(tc.thread), tc.sub)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(ws.Root, tc.sub); ws.Path != want {
			t.Errorf("path = %q, want %q (the cwd's place in the worktree)", ws.Path, want)
		}
		if fi, err := os.Stat(ws.Path); err != nil || !fi.IsDir() {
			t.Errorf("stat %s: %v", ws.Path, err)
		}
		if got := run(t, ws.Root, "rev-parse", "--show-toplevel"); !strings.HasSuffix(got, filepath.Base(ws.Root)) {
			t.Errorf("root %s is not the top of its checkout (%s)", ws.Root, got)
		}
	}
	if in, _ := m.Info(ref("1")); in.Root == "" {
		t.Error("Info lost the thread")
	} else if _, err := os.Stat(filepath.Join(in.Root, "svc", "api", "main.go")); err != nil {
		t.Error(err)
	}
}

func TestWorktreeRestartReuses(t *testing.T) {
	repo := newRepo(t)
	data := t.TempDir()
	a := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	first, err := newManager(t, data, 0).Open(t.Context(), a, ref("1.1"), "work")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(first.Path, "notes.txt"), "keep me\n")

	m := newManager(t, data, 0) // a restarted gateway
	got, ok := m.Info(ref("1.1"))
	if !ok || got != first {
		t.Fatalf("Info after restart = %+v, %v; want %+v", got, ok, first)
	}
	again, err := m.Open(t.Context(), a, ref("1.1"), "another title")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("Open after restart = %+v, want %+v", again, first)
	}
	if b, _ := os.ReadFile(filepath.Join(again.Path, "notes.txt")); string(b) != "keep me\n" {
		t.Errorf("notes.txt = %q after restart", b)
	}

	// Its directory deleted behind the gateway's back: made again, on
	// the same branch, with its commits.
	write(t, filepath.Join(again.Path, "notes.txt"), "committed\n")
	run(t, again.Path, "add", "notes.txt")
	run(t, again.Path, "commit", "--quiet", "-m", "notes")
	if err := os.RemoveAll(again.Path); err != nil {
		t.Fatal(err)
	}
	remade, err := newManager(t, data, 0).Open(t.Context(), a, ref("1.1"), "work")
	if err != nil {
		t.Fatal(err)
	}
	if remade != first {
		t.Errorf("Open of a deleted worktree = %+v, want %+v", remade, first)
	}
	if b, _ := os.ReadFile(filepath.Join(remade.Path, "notes.txt")); string(b) != "committed\n" {
		t.Errorf("notes.txt = %q in the worktree made again", b)
	}
}

func TestRemoveWorktree(t *testing.T) {
	repo := newRepo(t)
	m := newManager(t, t.TempDir(), 0)
	a := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	clean, err := m.Open(t.Context(), a, ref("1"), "clean")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := m.Open(t.Context(), a, ref("2"), "committed")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(committed.Path, "a.txt"), "a\n")
	run(t, committed.Path, "add", "a.txt")
	run(t, committed.Path, "commit", "--quiet", "-m", "a")

	rm, err := m.Remove(t.Context(), ref("1"))
	if err != nil {
		t.Fatal(err)
	}
	if rm.BranchKept || rm.Path != clean.Path {
		t.Errorf("Remove(clean) = %+v, want its branch deleted", rm)
	}
	if got := run(t, repo, "branch", "--list", clean.Branch); got != "" {
		t.Errorf("branch %s still exists: %q", clean.Branch, got)
	}
	rm, err = m.Remove(t.Context(), ref("2"))
	if err != nil {
		t.Fatal(err)
	}
	if !rm.BranchKept || rm.Commits != 1 {
		t.Errorf("Remove(committed) = %+v, want the branch kept with 1 commit", rm)
	}
	if got := run(t, repo, "log", "--format=%s", "-1", committed.Branch); got != "a" {
		t.Errorf("kept branch's last commit = %q, want a", got)
	}
	for _, p := range []string{clean.Path, committed.Path} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists: %v", p, err)
		}
	}
	if got := run(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if _, ok := m.Info(ref("2")); ok {
		t.Error("Info still knows a removed workspace")
	}
	if _, err := m.Remove(t.Context(), ref("2")); !errors.Is(err, workspace.ErrNone) {
		t.Errorf("Remove twice: %v, want ErrNone", err)
	}
}

func TestRemoveDirtyWorktreeIsKept(t *testing.T) {
	repo := newRepo(t)
	m := newManager(t, t.TempDir(), 0)
	ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "dirty")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Path, "untracked.txt"), "work in progress\n")
	_, err = m.Remove(t.Context(), ref("1"))
	if !errors.Is(err, workspace.ErrDirty) || !strings.Contains(err.Error(), ws.Path) {
		t.Fatalf("Remove of a dirty worktree: %v, want ErrDirty naming %s", err, ws.Path)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Path, "untracked.txt")); string(b) != "work in progress\n" {
		t.Errorf("the dirty file is gone: %q", b)
	}
	if got, ok := m.Info(ref("1")); !ok || got != ws {
		t.Errorf("Info = %+v, %v after a refused removal; want %+v", got, ok, ws)
	}
}

func TestWorktreeBadStates(t *testing.T) {
	t.Run("not a repository", func(t *testing.T) {
		gitEnv(t)
		cwd := t.TempDir()
		m := newManager(t, t.TempDir(), 0)
		_, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: cwd}, ref("1"), "x")
		if !errors.Is(err, workspace.ErrNotRepo) || !strings.Contains(err.Error(), cwd) {
			t.Errorf("err = %v, want ErrNotRepo naming %s", err, cwd)
		}
	})
	t.Run("no commit yet", func(t *testing.T) {
		gitEnv(t)
		cwd := t.TempDir()
		run(t, cwd, "init", "--quiet")
		m := newManager(t, t.TempDir(), 0)
		_, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: cwd}, ref("1"), "x")
		if !errors.Is(err, workspace.ErrNotRepo) || !strings.Contains(err.Error(), "no commit") {
			t.Errorf("err = %v, want ErrNotRepo saying there is no commit", err)
		}
	})
	t.Run("branch exists", func(t *testing.T) {
		repo := newRepo(t)
		run(t, repo, "branch", "acp/feature")
		run(t, repo, "branch", "acp/feature-2")
		m := newManager(t, t.TempDir(), 0)
		ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "feature")
		if err != nil {
			t.Fatal(err)
		}
		if ws.Branch != "acp/feature-3" {
			t.Errorf("branch = %q, want acp/feature-3", ws.Branch)
		}
	})
	t.Run("git missing", func(t *testing.T) {
		repo := newRepo(t)
		t.Setenv("PATH", t.TempDir())
		m := newManager(t, t.TempDir(), 0)
		_, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "x")
		if !errors.Is(err, workspace.ErrNoGit) {
			t.Errorf("err = %v, want ErrNoGit", err)
		}
	})
	t.Run("directory taken", func(t *testing.T) {
		repo := newRepo(t)
		data := t.TempDir()
		path := filepath.Join(data, "workspaces", "slack", "C1", "1")
		if err := os.MkdirAll(path, 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(path, "mine"), "x")
		_, err := newManager(t, data, 0).Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "x")
		if !errors.Is(err, workspace.ErrTaken) {
			t.Errorf("err = %v, want ErrTaken", err)
		}
		if b, _ := os.ReadFile(filepath.Join(path, "mine")); string(b) != "x" {
			t.Error("the file in the way was touched")
		}
	})
}

func TestDiff(t *testing.T) {
	repo := newRepo(t)
	m := newManager(t, t.TempDir(), 0)
	ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "diff")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Path, "committed.txt"), "in a commit\n")
	run(t, ws.Path, "add", "committed.txt")
	run(t, ws.Path, "commit", "--quiet", "-m", "c")
	write(t, filepath.Join(ws.Path, "README"), "hello\nedited\n")
	write(t, filepath.Join(ws.Path, "untracked.txt"), "brand new\n")
	before := run(t, ws.Path, "status", "--porcelain")

	d, err := m.Diff(t.Context(), ref("1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"committed.txt", "README", "untracked.txt", "3 files changed"} {
		if !strings.Contains(d.Stat, f) {
			t.Errorf("stat lacks %q:\n%s", f, d.Stat)
		}
	}
	for _, s := range []string{"+in a commit", "+edited", "+brand new", "diff --git a/untracked.txt b/untracked.txt"} {
		if !strings.Contains(d.Patch, s) {
			t.Errorf("patch lacks %q:\n%s", s, d.Patch)
		}
	}
	if after := run(t, ws.Path, "status", "--porcelain"); after != before {
		t.Errorf("Diff changed the worktree's status: %q, was %q", after, before)
	}

	dm := newManager(t, t.TempDir(), 0)
	if _, err := dm.Open(t.Context(), workspace.Agent{Mode: workspace.Dir}, ref("1"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := dm.Diff(t.Context(), ref("1")); !errors.Is(err, workspace.ErrNotWorktree) {
		t.Errorf("Diff of a dir: %v, want ErrNotWorktree", err)
	}
	if _, err := dm.Diff(t.Context(), ref("2")); !errors.Is(err, workspace.ErrNone) {
		t.Errorf("Diff of a thread without a workspace: %v, want ErrNone", err)
	}
}

func TestDirMode(t *testing.T) {
	data := t.TempDir()
	m := newManager(t, data, 0)
	web := channels.ThreadRef{Platform: "web", Channel: "local", Thread: "../../etc"}
	ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Dir, Cwd: t.TempDir()}, web, "")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(data, "workspaces", "web", "local")
	if filepath.Dir(ws.Path) != root || ws.Mode != workspace.Dir {
		t.Errorf("dir = %+v, want a directory in %s", ws, root)
	}
	fi, err := os.Stat(ws.Path)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("stat %s: %v, %v; want a directory 0700", ws.Path, fi, err)
	}
	write(t, filepath.Join(ws.Path, "f"), "kept")
	other, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Dir}, ref("2"), "")
	if err != nil || other.Path == ws.Path {
		t.Fatalf("a second thread got %+v, %v", other, err)
	}

	again, err := newManager(t, data, 0).Open(t.Context(), workspace.Agent{Mode: workspace.Dir}, web, "")
	if err != nil || again != ws {
		t.Fatalf("after restart: %+v, %v; want %+v", again, err, ws)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Path, "f")); string(b) != "kept" {
		t.Errorf("file after restart = %q", b)
	}
	if _, err := m.Remove(t.Context(), web); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed dir still there: %v", err)
	}

	tmpl := filepath.Join(t.TempDir(), "ws-{platform}", "{thread}")
	ws, err = m.Open(t.Context(), workspace.Agent{Mode: workspace.Dir, Template: tmpl}, ref("3.3"), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.NewReplacer("{platform}", "slack", "{thread}", "3.3").Replace(tmpl); ws.Path != want {
		t.Errorf("templated path = %q, want %q", ws.Path, want)
	}
}

func TestShared(t *testing.T) {
	cwd := t.TempDir()
	m := newManager(t, t.TempDir(), time.Hour)
	ws, err := m.Open(t.Context(), workspace.Agent{Cwd: cwd}, ref("1"), "")
	if err != nil || ws.Path != cwd || ws.Mode != workspace.Shared {
		t.Fatalf("Open(shared) = %+v, %v; want %s", ws, err, cwd)
	}
	if _, ok := m.Info(ref("1")); ok {
		t.Error("a shared cwd is recorded as the thread's own")
	}
	if _, err := m.Remove(t.Context(), ref("1")); !errors.Is(err, workspace.ErrNone) {
		t.Errorf("Remove(shared) = %v, want ErrNone", err)
	}
	if _, err := os.Stat(cwd); err != nil {
		t.Errorf("the shared cwd: %v", err)
	}
}

func TestSweep(t *testing.T) {
	repo := newRepo(t)
	data := t.TempDir()
	now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	m, err := workspace.New(workspace.Options{DataDir: data, Keep: 24 * time.Hour, Now: func() time.Time { return now.Add(-48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	wt := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	dir := workspace.Agent{Mode: workspace.Dir}
	idle, _ := m.Open(t.Context(), dir, ref("idle"), "")
	busy, _ := m.Open(t.Context(), dir, ref("busy"), "")
	unknown, _ := m.Open(t.Context(), dir, ref("unknown"), "") // created 48h ago
	dirty, err := m.Open(t.Context(), wt, ref("dirty"), "dirty")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dirty.Path, "wip"), "x")
	last := map[channels.ThreadRef]time.Time{
		ref("idle"):  now.Add(-25 * time.Hour),
		ref("busy"):  now.Add(-time.Hour),
		ref("dirty"): now.Add(-30 * time.Hour),
	}
	removed, err := m.Sweep(t.Context(), now, func(r channels.ThreadRef) time.Time { return last[r] })
	if !errors.Is(err, workspace.ErrDirty) {
		t.Errorf("Sweep err = %v, want ErrDirty for the dirty worktree", err)
	}
	var got []string
	for _, r := range removed {
		got = append(got, r.Path)
	}
	if want := []string{idle.Path, unknown.Path}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("removed %v, want %v", got, want)
	}
	for _, p := range []string{busy.Path, dirty.Path} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}

	keepForever := newManager(t, data, 0)
	if removed, err := keepForever.Sweep(t.Context(), now.Add(1000*time.Hour), func(channels.ThreadRef) time.Time { return time.Time{} }); len(removed) != 0 || err != nil {
		t.Errorf("Sweep with keep 0 = %v, %v; want nothing", removed, err)
	}
}

func TestConcurrentOpen(t *testing.T) {
	repo := newRepo(t)
	m := newManager(t, t.TempDir(), 0)
	a := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	threads := []channels.ThreadRef{ref("1"), ref("2"), ref("1"), ref("3")}
	got := make([]workspace.Info, len(threads))
	var wg sync.WaitGroup
	for i, th := range threads {
		wg.Go(func() {
			ws, err := m.Open(t.Context(), a, th, "same name")
			if err != nil {
				t.Error(err)
			}
			got[i] = ws
		})
	}
	wg.Wait()
	if got[0] != got[2] {
		t.Errorf("one thread opened twice at once got two workspaces: %+v and %+v", got[0], got[2])
	}
	paths, branches := map[string]bool{}, map[string]bool{}
	for _, ws := range []workspace.Info{got[0], got[1], got[3]} {
		paths[ws.Path], branches[ws.Branch] = true, true
	}
	if len(paths) != 3 || len(branches) != 3 {
		t.Errorf("three threads got %d paths and %d branches: %+v", len(paths), len(branches), got)
	}
	if n := strings.Count(run(t, repo, "worktree", "list", "--porcelain"), "worktree "); n != 4 {
		t.Errorf("%d checkouts, want the main one and 3 worktrees", n)
	}
}

// TestGitGetsNoSecrets: the repository is the agent's to write, and git
// runs what its configuration says (hooks, filters). Git, run for a
// thread's worktree, runs no hook, and what it does run sees none of the
// gateway's environment beyond the basics.
func TestGitGetsNoSecrets(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("DISCORD_TOKEN", "discord-secret-value")
	t.Setenv("GATEWAY_CHANNELS__SLACK__BOTTOKEN", "xoxb-secret-value")
	out := t.TempDir()
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nenv > "+filepath.Join(out, "hook")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A smudge filter the checkout of a worktree runs (what only reads
	// the worktree, as Diff, runs none: TestDiffRunsNothingOfTheAgent).
	envFile := filepath.Join(out, "filter")
	write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=spy\n")
	write(t, filepath.Join(repo, "a.txt"), "a\n")
	run(t, repo, "add", ".gitattributes", "a.txt")
	run(t, repo, "commit", "--quiet", "-m", "spied")
	run(t, repo, "config", "filter.spy.smudge", "env > "+envFile+"; cat")
	m := newManager(t, t.TempDir(), 0)
	if _, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "hook")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the repository's post-checkout hook ran: %v", err)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the filter did not run, so the test shows nothing: %v", err)
	}
	if !strings.Contains(string(env), "PATH=") {
		t.Errorf("git's environment lacks PATH:\n%s", env)
	}
	for _, s := range []string{"discord-secret-value", "xoxb-secret-value", "DISCORD_TOKEN", "GATEWAY_"} {
		if strings.Contains(string(env), s) {
			t.Errorf("git's environment holds %q:\n%s", s, env)
		}
	}
}

// TestTemplateSharedByTwoThreads: a template without {channel} gives two
// Slack threads with the same ts in two channels one directory; the
// second is refused rather than let into the first one's files.
func TestTemplateSharedByTwoThreads(t *testing.T) {
	m := newManager(t, t.TempDir(), 0)
	a := workspace.Agent{Mode: workspace.Dir, Template: "ws/{platform}/{thread}"}
	first := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"}
	second := channels.ThreadRef{Platform: "slack", Channel: "C2", Thread: "1700000000.000100"}
	if _, err := m.Open(t.Context(), a, first, ""); err != nil {
		t.Fatal(err)
	}
	_, err := m.Open(t.Context(), a, second, "")
	if !errors.Is(err, workspace.ErrTaken) || !strings.Contains(err.Error(), "{channel}") {
		t.Errorf("second thread: %v, want ErrTaken suggesting {channel}", err)
	}
	if _, ok := m.Info(second); ok {
		t.Error("the refused thread was recorded")
	}
}

// A worktree's info names its repository's git directories as the
// repository records them (the sandbox shows them to the agent): the
// common directory of the main checkout and, in it, the worktree's own,
// whose gitdir names the worktree. A worktree's .git file the agent
// rewrote does not move them.
func TestWorktreeGitDirs(t *testing.T) {
	repo := newRepo(t)
	data := t.TempDir()
	a := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	m := newManager(t, data, 0)
	one, err := m.Open(t.Context(), a, ref("1.1"), "work")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(t.Context(), a, ref("2.2"), "work"); err != nil {
		t.Fatal(err)
	}
	common, _ := filepath.EvalSymlinks(filepath.Join(repo, ".git"))
	if got, _ := filepath.EvalSymlinks(one.GitCommon); got != common {
		t.Fatalf("GitCommon = %q, want %q", one.GitCommon, common)
	}
	if filepath.Dir(one.GitDir) != filepath.Join(one.GitCommon, "worktrees") {
		t.Fatalf("GitDir = %q, want a directory of %s/worktrees", one.GitDir, one.GitCommon)
	}
	if got := run(t, one.Path, "rev-parse", "--absolute-git-dir"); got != one.GitDir {
		t.Errorf("git says the worktree's git directory is %q, the info %q", got, one.GitDir)
	}
	write(t, filepath.Join(one.Path, ".git"), "gitdir: "+filepath.Join(data, "elsewhere")+"\n")
	again := newManager(t, data, 0)
	if got, ok := again.Info(ref("1.1")); !ok || got.GitCommon != one.GitCommon || got.GitDir != one.GitDir {
		t.Errorf("after a restart Info = %+v, want the git directories of %+v", got, one)
	}
	if got, err := again.Open(t.Context(), a, ref("1.1"), "work"); err == nil && got.GitDir != one.GitDir {
		t.Errorf("with the .git file rewritten Open gives GitDir %q, want %q or a refusal", got.GitDir, one.GitDir)
	}
}
