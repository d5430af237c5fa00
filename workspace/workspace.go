package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Errors a thread can be shown; match them with errors.Is. The errors
// returned wrap them with the details (paths, branches, git's words).
var (
	// ErrNoGit: git is not installed (or not on PATH).
	ErrNoGit = errors.New("git is not installed")
	// ErrNotRepo: workspace: worktree, and the agent's cwd is not in a
	// git repository (or the repository has no commit yet).
	ErrNotRepo = errors.New("not a git repository with a commit")
	// ErrDirty: the worktree has changes not committed; it was kept.
	ErrDirty = errors.New("the worktree has changes not committed")
	// ErrNone: the thread has no workspace of its own.
	ErrNone = errors.New("the thread has no workspace of its own")
	// ErrNotWorktree: the thread's workspace is not a git worktree, so it
	// has no branch to diff against.
	ErrNotWorktree = errors.New("the thread's workspace is not a git worktree")
	// ErrTaken: the thread's directory exists already and is not the one
	// made for it.
	ErrTaken = errors.New("the directory exists already")
)

// Agent is what an agent's settings say about its threads' workspaces.
type Agent struct {
	// Mode is agents.list.NAME.workspace ("" = Shared).
	Mode Mode
	// Cwd is the agent's working directory: the shared one, and for
	// Worktree the repository the worktrees are made from ("" = the
	// gateway's working directory).
	Cwd string
	// Template is agents.list.NAME.workspaceDir: where a thread's
	// directory or worktree goes ("" = DefaultTemplate; relative to the
	// data directory unless absolute). See CheckTemplate.
	Template string
}

// Info describes a thread's workspace.
type Info struct {
	Mode Mode
	// Path is the thread's working directory. In a worktree it is where
	// the agent's cwd is in its checkout (the top, unless cwd is a
	// directory inside the repository).
	Path string
	// Root is the thread's directory: Path, or the top of its worktree.
	Root string
	// Repo is the main checkout the worktree was made from (Worktree).
	Repo string
	// Branch is the worktree's branch, acp/NAME (Worktree).
	Branch string
	// Start is the commit the branch started at (Worktree).
	Start string
	// GitCommon is the repository's common git directory (Repo's .git,
	// where its objects, branches, configuration and hooks are), and
	// GitDir the worktree's own git directory in it (its HEAD and index),
	// as the repository records them: not read from the worktree's .git
	// file, which is the agent's to write (Worktree; "" when git does not
	// say).
	GitCommon, GitDir string
}

// Options configure a Manager.
type Options struct {
	// DataDir is the gateway's data directory: the index and the default
	// directories go under DataDir/workspaces.
	DataDir string
	// Keep is workspace.keep: Sweep removes the workspaces of threads idle
	// this long; 0 never.
	Keep time.Duration
	// Log gets what the Manager did (nil: discarded).
	Log *slog.Logger
	// Now is the clock of the records' creation times (nil: time.Now).
	Now func() time.Time
}

// Manager makes, describes and removes the threads' workspaces. Its
// methods are safe for concurrent use; they run git and touch files, so
// they block, and take a context where git may run long.
type Manager struct {
	o     Options
	index string // path of the index file

	mu    sync.Mutex // guards the fields below and the index file
	recs  map[channels.ThreadRef]*record
	locks map[string]*sync.Mutex // by path: a repository, or a thread's dir
}

// New returns a Manager over the workspaces recorded in
// DataDir/workspaces/index.json (none yet is fine; one that cannot be
// read is an error).
func New(o Options) (*Manager, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Manager{o: o, index: filepath.Join(o.DataDir, "workspaces", indexFile), locks: map[string]*sync.Mutex{}}
	recs, err := loadIndex(m.index)
	if err != nil {
		return nil, err
	}
	m.recs = recs
	return m, nil
}

// lock locks the named path (a repository, a thread's directory) and
// returns its unlock.
func (m *Manager) lock(path string) func() {
	m.mu.Lock()
	l, ok := m.locks[path]
	if !ok {
		l = &sync.Mutex{}
		m.locks[path] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (m *Manager) get(t channels.ThreadRef) (*record, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[t]
	if !ok {
		return nil, false
	}
	c := *r
	return &c, true
}

// put records r (nil: forgets t) and saves the index. It fails when r's
// path is another thread's (ErrTaken).
func (m *Manager) put(t channels.ThreadRef, r *record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r != nil {
		if err := m.claimLocked(t, r.Path); err != nil {
			return err
		}
	}
	old, had := m.recs[t]
	if r == nil {
		delete(m.recs, t)
	} else {
		m.recs[t] = r
	}
	if err := saveIndex(m.index, m.recs); err != nil {
		if had {
			m.recs[t] = old
		} else {
			delete(m.recs, t)
		}
		return err
	}
	return nil
}

// Open returns the working directory of thread t for an agent set up as
// a, making it at first use. name is a short name of the thread (its
// title, or the first words of its first message) for a worktree's
// branch. A thread keeps the workspace it was given until it is removed,
// even when its agent's settings change. Open blocks while git works.
func (m *Manager) Open(ctx context.Context, a Agent, t channels.ThreadRef, name string) (Info, error) {
	cwd, err := absDir(a.Cwd)
	if err != nil {
		return Info{}, err
	}
	mode := cmp.Or(a.Mode, Shared)
	if r, ok := m.get(t); ok {
		mode = r.Mode
		if mode == Worktree {
			cwd = r.Repo
		}
	}
	switch mode {
	case Shared:
		return Info{Mode: Shared, Path: cwd}, nil
	case Dir:
		return m.openDir(t, expand(a.Template, m.o.DataDir, t), templateBase(a.Template, m.o.DataDir))
	case Worktree:
		return m.openWorktree(ctx, cwd, t, name, a.Template)
	}
	return Info{}, fmt.Errorf("workspace: unknown mode %q (allowed: shared dir worktree)", mode)
}

func absDir(dir string) (string, error) {
	if dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("workspace: %w", err)
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	return abs, nil
}

func (m *Manager) openDir(t channels.ThreadRef, path, base string) (Info, error) {
	if r, ok := m.get(t); ok {
		path = r.Path
	}
	defer m.lock(path)()
	if err := m.claim(t, path); err != nil {
		return Info{}, err
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return Info{}, fmt.Errorf("workspace: cannot make the thread's directory: %w", err)
	}
	r, ok := m.get(t)
	if !ok {
		r = &record{Platform: t.Platform, Channel: t.Channel, Thread: t.Thread, Mode: Dir, Path: path, Base: base, Created: m.o.Now()}
		if err := m.put(t, r); err != nil {
			return Info{}, err
		}
		m.o.Log.Info("workspace made", "thread", t, "path", path)
	}
	return r.info(), nil
}

// claim fails when path is another thread's workspace.
func (m *Manager) claim(t channels.ThreadRef, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.claimLocked(t, path)
}

func (m *Manager) claimLocked(t channels.ThreadRef, path string) error {
	for ref, r := range m.recs {
		if ref != t && r.Path == path {
			return fmt.Errorf("workspace: %s is the workspace of thread %s already (make agents.list.NAME.workspaceDir name {channel} and {thread}): %w", path, ref, ErrTaken)
		}
	}
	return nil
}

// Info returns the thread's workspace as recorded: false for a thread
// without one of its own (Shared, or none made yet). It does no I/O.
func (m *Manager) Info(t channels.ThreadRef) (Info, bool) {
	r, ok := m.get(t)
	if !ok {
		return Info{}, false
	}
	return r.info(), true
}

// Removed says what Remove did.
type Removed struct {
	Info
	// BranchKept is true when the worktree's branch was kept because it
	// has commits beyond its start (Commits of them).
	BranchKept bool
	Commits    int
}

// Remove removes the thread's directory or worktree and forgets it. A
// worktree with changes not committed is kept (ErrDirty); its branch is
// deleted when it has no commits beyond its start, and kept otherwise
// (Removed.BranchKept). A thread without a workspace of its own is
// ErrNone. Remove blocks while git works.
func (m *Manager) Remove(ctx context.Context, t channels.ThreadRef) (Removed, error) {
	r, ok := m.get(t)
	if !ok {
		return Removed{}, fmt.Errorf("workspace: %w", ErrNone)
	}
	out := Removed{Info: r.info()}
	switch r.Mode {
	case Dir:
		defer m.lock(r.Path)()
		if err := removeBeneath(m.base(r), r.Path); err != nil {
			return out, err
		}
	case Worktree:
		defer m.lock(r.Repo)()
		kept, commits, err := m.removeWorktree(ctx, r)
		out.BranchKept, out.Commits = kept, commits
		if err != nil {
			return out, err
		}
	}
	if err := m.put(t, nil); err != nil {
		return out, err
	}
	m.o.Log.Info("workspace removed", "thread", t, "path", r.Path, "branch", r.Branch, "branchKept", out.BranchKept)
	return out, nil
}

// SetKeep replaces Options.Keep (workspace.keep, on a configuration
// reload): the next Sweep uses it.
func (m *Manager) SetKeep(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.o.Keep = d
}

// Sweep removes the workspaces of threads idle for Options.Keep or longer
// at now: lastActive(t) is when thread t was last active (zero: unknown,
// and then the workspace's creation counts). It does nothing when Keep is
// 0. It returns what it removed and, joined, why it kept any it should
// have removed (a dirty worktree: ErrDirty). Sweep blocks while git works.
func (m *Manager) Sweep(ctx context.Context, now time.Time, lastActive func(channels.ThreadRef) time.Time) ([]Removed, error) {
	m.mu.Lock()
	keep := m.o.Keep
	if keep <= 0 {
		m.mu.Unlock()
		return nil, nil
	}
	refs := slices.SortedFunc(maps.Keys(m.recs), compareRefs)
	created := make(map[channels.ThreadRef]time.Time, len(refs))
	for _, t := range refs {
		created[t] = m.recs[t].Created
	}
	m.mu.Unlock()
	var (
		out  []Removed
		errs []error
	)
	for _, t := range refs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		last := lastActive(t)
		if last.IsZero() {
			last = created[t]
		}
		if now.Sub(last) < keep {
			continue
		}
		rm, err := m.Remove(ctx, t)
		if errors.Is(err, ErrNone) {
			continue // removed meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("thread %s: %w", t, err))
			continue
		}
		out = append(out, rm)
	}
	return out, errors.Join(errs...)
}

func compareRefs(a, b channels.ThreadRef) int {
	return cmp.Or(cmp.Compare(a.Platform, b.Platform), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Thread, b.Thread))
}

func sortRecords(recs []*record) {
	slices.SortFunc(recs, func(a, b *record) int { return compareRefs(a.ref(), b.ref()) })
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
