package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
)

// gitInherit names the variables of the gateway's environment git gets
// besides agent.BaseEnv: where its configuration is. The gateway's
// tokens never reach git, nor anything the repository makes it run.
var gitInherit = []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"}

// gitSafety are options of every git run: the repository is the agent's
// to write, so git runs none of its hooks and no file-system monitor
// from its configuration.
var gitSafety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}

// git runs git in dir with extra environment entries and returns its
// standard output. A failure carries git's own words.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	exe, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("workspace: %w (needed for workspace: worktree)", ErrNoGit)
	}
	cmd := exec.CommandContext(ctx, exe, slices.Concat([]string{"-C", dir}, gitSafety, args)...)
	base, _ := agent.Spec{InheritEnv: gitInherit}.Environ(os.Environ())
	cmd.Env = slices.Concat(base, []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}, env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), &gitError{args: args, msg: msg, err: err}
	}
	return stdout.String(), nil
}

// gitError is a git command that failed.
type gitError struct {
	args []string
	msg  string // git's standard error
	err  error
}

func (e *gitError) Error() string { return "git " + e.args[0] + ": " + e.msg }
func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of a failed git command (-1: it did not run).
func exitCode(err error) int {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	return -1
}

func line(s string) string { return strings.TrimSpace(s) }

// repoOf returns the top directory of the checkout holding cwd, where cwd
// is in it ("" at the top, else a relative path), and the commit its HEAD
// is at.
func repoOf(ctx context.Context, cwd string) (repo, sub, head string, err error) {
	out, err := git(ctx, cwd, nil, "rev-parse", "--show-toplevel", "--show-prefix")
	if errors.Is(err, ErrNoGit) {
		return "", "", "", err
	}
	if err != nil {
		return "", "", "", fmt.Errorf("workspace: %s is %w, which workspace: worktree needs (%v)", cwd, ErrNotRepo, err)
	}
	repo, sub, _ = strings.Cut(strings.TrimSuffix(out, "\n"), "\n")
	sub = filepath.Clean(filepath.FromSlash(strings.TrimSuffix(sub, "/")))
	if sub == "." {
		sub = ""
	}
	out, err = git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return "", "", "", fmt.Errorf("workspace: the repository %s has no commit yet, so there is nothing to check out (workspace: worktree needs %w)", repo, ErrNotRepo)
	}
	return repo, sub, line(out), nil
}

// CheckRepo returns nil when dir is in a git repository with a commit, as
// workspace: worktree needs, and otherwise why not (ErrNoGit, ErrNotRepo,
// with git's words). It runs git.
func CheckRepo(ctx context.Context, dir string) error {
	_, _, _, err := repoOf(ctx, dir)
	return err
}

// branchExists reports whether refs/heads/branch exists in repo.
func branchExists(ctx context.Context, repo, branch string) (bool, error) {
	_, err := git(ctx, repo, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, err
}

// freeBranch returns base, or base-2, base-3 ... the first that does not
// exist in repo.
func freeBranch(ctx context.Context, repo, base string) (string, error) {
	for i := 1; ; i++ {
		b := base
		if i > 1 {
			b = base + "-" + strconv.Itoa(i)
		}
		taken, err := branchExists(ctx, repo, b)
		if err != nil {
			return "", err
		}
		if !taken {
			return b, nil
		}
	}
}

// isWorktreeOf reports whether path is the top of a checkout of the
// repository whose main checkout is repo.
func isWorktreeOf(ctx context.Context, path, repo string) bool {
	top, err := git(ctx, path, nil, "rev-parse", "--show-toplevel")
	if err != nil || !samePath(line(top), path) {
		return false
	}
	a, err1 := git(ctx, path, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	b, err2 := git(ctx, repo, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	return err1 == nil && err2 == nil && samePath(line(a), line(b))
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// emptyOrMissing reports whether path does not exist or is an empty
// directory.
func emptyOrMissing(path string) bool {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

func (m *Manager) openWorktree(ctx context.Context, cwd string, t channels.ThreadRef, name, tmpl string) (Info, error) {
	repo, sub, head, err := repoOf(ctx, cwd)
	if err != nil {
		return Info{}, err
	}
	defer m.lock(repo)()
	if r, ok := m.get(t); ok {
		return m.reopenWorktree(ctx, r)
	}
	path := expand(tmpl, m.o.DataDir, t)
	if err := m.claim(t, path); err != nil {
		return Info{}, err
	}
	if !emptyOrMissing(path) {
		return Info{}, fmt.Errorf("workspace: the thread's worktree would be %s, which is not empty: %w", path, ErrTaken)
	}
	branch, err := freeBranch(ctx, repo, branchBase(name, t.Thread))
	if err != nil {
		return Info{}, fmt.Errorf("workspace: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Info{}, fmt.Errorf("workspace: %w", err)
	}
	r := &record{Platform: t.Platform, Channel: t.Channel, Thread: t.Thread, Mode: Worktree,
		Path: path, Base: templateBase(tmpl, m.o.DataDir), Sub: sub, Repo: repo, Branch: branch, Start: head, Created: m.o.Now()}
	// Recorded first: a gateway stopped half way finds it and finishes.
	if err := m.put(t, r); err != nil {
		return Info{}, err
	}
	if _, err := git(ctx, repo, nil, "worktree", "add", "--quiet", "-b", branch, path, head); err != nil {
		_ = m.put(t, nil)
		return Info{}, fmt.Errorf("workspace: cannot make the thread's worktree: %w", err)
	}
	m.o.Log.Info("worktree made", "thread", t, "path", path, "branch", branch, "start", head)
	return m.withGit(ctx, r)
}

// withGit is withSub with the worktree's git directories (Info.GitCommon,
// GitDir) found from its repository and recorded; when git does not say,
// the info has none (logged). Call it with r.Repo locked.
func (m *Manager) withGit(ctx context.Context, r *record) (Info, error) {
	common, own, err := gitDirs(ctx, r.Repo, r.Path)
	if err != nil {
		m.o.Log.Warn("cannot find the worktree's git directories", "path", r.Path, "repo", r.Repo, "err", err)
		common, own = "", ""
	}
	if common != r.GitCommon || own != r.GitDir {
		r.GitCommon, r.GitDir = common, own
		if err := m.put(r.ref(), r); err != nil {
			return Info{}, err
		}
	}
	return withSub(r)
}

// gitDirs returns repo's common git directory and, in it, the git
// directory of its worktree at path: the one of common/worktrees whose
// gitdir file names path/.git. The worktree's own .git file is not read:
// the agent can write it.
func gitDirs(ctx context.Context, repo, path string) (common, own string, err error) {
	out, err := git(ctx, repo, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", "", err
	}
	common = line(out)
	dirs, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return "", "", err
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(common, "worktrees", d.Name(), "gitdir"))
		if err == nil && samePath(filepath.Dir(line(string(b))), path) {
			return common, filepath.Join(common, "worktrees", d.Name()), nil
		}
	}
	return "", "", fmt.Errorf("no worktree of %s is at %s", common, path)
}

// withSub returns r's info, making the agent's directory inside the
// worktree when the checkout lacks it (a directory git does not track).
func withSub(r *record) (Info, error) {
	in := r.info()
	if err := os.MkdirAll(in.Path, 0o700); err != nil {
		return Info{}, fmt.Errorf("workspace: %w", err)
	}
	return in, nil
}

// reopenWorktree returns the recorded worktree r, making it again when its
// directory is gone (on its branch, which is made again at its start when
// gone too). Call it with r.Repo locked.
func (m *Manager) reopenWorktree(ctx context.Context, r *record) (Info, error) {
	if exists(r.Path) {
		if !isWorktreeOf(ctx, r.Path, r.Repo) {
			return Info{}, fmt.Errorf("workspace: %s is no longer a worktree of %s: %w", r.Path, r.Repo, ErrTaken)
		}
		return m.withGit(ctx, r)
	}
	if _, err := git(ctx, r.Repo, nil, "worktree", "prune"); err != nil {
		return Info{}, fmt.Errorf("workspace: %w", err)
	}
	has, err := branchExists(ctx, r.Repo, r.Branch)
	if err != nil {
		return Info{}, fmt.Errorf("workspace: %w", err)
	}
	args := []string{"worktree", "add", "--quiet", r.Path, r.Branch}
	if !has {
		args = []string{"worktree", "add", "--quiet", "-b", r.Branch, r.Path, r.Start}
	}
	if _, err := git(ctx, r.Repo, nil, args...); err != nil {
		return Info{}, fmt.Errorf("workspace: cannot make the thread's worktree again: %w", err)
	}
	m.o.Log.Info("worktree made again", "path", r.Path, "branch", r.Branch)
	return m.withGit(ctx, r)
}

// removeWorktree removes r's worktree, then its branch when it has no
// commits beyond r.Start. Call it with r.Repo locked.
func (m *Manager) removeWorktree(ctx context.Context, r *record) (kept bool, commits int, err error) {
	if exists(r.Path) {
		dirty, err := worktreeDirty(ctx, r.Path)
		if err != nil {
			return false, 0, err
		}
		if dirty {
			return false, 0, fmt.Errorf("workspace: the worktree %s (branch %s) was kept: %w", r.Path, r.Branch, ErrDirty)
		}
		// Removed by the gateway, beneath its base (git worktree remove
		// would run the repository's configuration and follow a
		// symlinked parent); git forgets it next.
		if err := removeBeneath(m.base(r), r.Path); err != nil {
			return false, 0, err
		}
	}
	if _, err := git(ctx, r.Repo, nil, "worktree", "prune"); err != nil {
		return false, 0, fmt.Errorf("workspace: %w", err)
	}
	has, err := branchExists(ctx, r.Repo, r.Branch)
	if err != nil || !has {
		return false, 0, err
	}
	out, err := git(ctx, r.Repo, nil, "rev-list", "--count", r.Start+".."+"refs/heads/"+r.Branch)
	if err != nil {
		return false, 0, fmt.Errorf("workspace: %w", err)
	}
	commits, err = strconv.Atoi(line(out))
	if err != nil {
		return false, 0, fmt.Errorf("workspace: git rev-list: %w", err)
	}
	if commits > 0 {
		return true, commits, nil
	}
	if _, err := git(ctx, r.Repo, nil, "branch", "--quiet", "-D", r.Branch); err != nil {
		return false, 0, fmt.Errorf("workspace: %w", err)
	}
	return false, 0, nil
}

// worktreeDirty reports whether the worktree at path has changes not
// committed or files not tracked (ignored ones excepted), as git status
// sees them without the repository's configuration (neutral).
func worktreeDirty(ctx context.Context, path string) (bool, error) {
	n, err := openNeutral(ctx, path)
	if err != nil {
		return false, err
	}
	defer n.Close()
	// Submodules are not entered: git would run in them with their own
	// configuration, the agent's to write. One checked out counts as
	// dirty (kept), as git worktree remove refuses them.
	out, err := n.git(ctx, "status", "--porcelain", "--ignore-submodules=all")
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	if line(out) != "" {
		return true, nil
	}
	staged, err := n.git(ctx, "ls-files", "--stage", "-z")
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	for _, e := range strings.Split(staged, "\x00") {
		mode, rest, _ := strings.Cut(e, " ")
		_, name, _ := strings.Cut(rest, "\t")
		if mode == "160000" && !emptyOrMissing(filepath.Join(path, name)) {
			return true, nil
		}
	}
	return false, nil
}

// Diff is what a thread's worktree changed since its start.
type Diff struct {
	// Stat is git diff --stat.
	Stat string
	// Patch is the full diff.
	Patch string
	// Path is the worktree's directory, Start the commit the diff is
	// from (for people to run git diff themselves).
	Path, Start string
}

// Diff returns what the thread's worktree changed since the commit its
// branch started at: commits, changes not committed and files not yet
// tracked (ignored files excepted). The worktree and its index are left
// as they are. A thread whose workspace is not a worktree is
// ErrNotWorktree; one without a workspace of its own is ErrNone. Diff
// blocks while git works.
func (m *Manager) Diff(ctx context.Context, t channels.ThreadRef) (Diff, error) {
	r, ok := m.get(t)
	if !ok {
		return Diff{}, fmt.Errorf("workspace: %w", ErrNone)
	}
	if r.Mode != Worktree {
		return Diff{}, fmt.Errorf("workspace: %w", ErrNotWorktree)
	}
	// A copy of the index takes in the untracked files; the real one is
	// not touched, nor is anything of the repository's configuration
	// (its filters, hooks and drivers) used.
	n, err := openNeutral(ctx, r.Path)
	if err != nil {
		return Diff{}, err
	}
	defer n.Close()
	if _, err := n.git(ctx, "add", "--all"); err != nil {
		return Diff{}, fmt.Errorf("workspace: %w", err)
	}
	d := Diff{Path: r.Path, Start: r.Start}
	if d.Stat, err = n.git(ctx, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "--stat", r.Start); err != nil {
		return Diff{}, fmt.Errorf("workspace: %w", err)
	}
	if d.Patch, err = n.git(ctx, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", r.Start); err != nil {
		return Diff{}, fmt.Errorf("workspace: %w", err)
	}
	return d, nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}
