package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/workspace"
)

// hostileRepo opens a worktree for thread 1 whose agent configured the
// repository to run commands: clean, smudge and process filters that
// .gitattributes applies to every file, a fsmonitor and hooks, each
// touching a marker. It returns the worktree and the markers' directory.
func hostileRepo(t *testing.T, m *workspace.Manager) (workspace.Info, string) {
	t.Helper()
	repo := newRepo(t)
	ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "hostile")
	if err != nil {
		t.Fatal(err)
	}
	marks := t.TempDir()
	touch := func(name string) string { return "touch " + filepath.Join(marks, name) }
	// What the agent runs in its worktree: git config writes the
	// repository's common configuration.
	run(t, ws.Path, "config", "filter.evil.clean", touch("clean")+"; cat")
	run(t, ws.Path, "config", "filter.evil.smudge", touch("smudge")+"; cat")
	run(t, ws.Path, "config", "filter.evil.required", "true")
	run(t, ws.Path, "config", "filter.proc.process", touch("process"))
	run(t, ws.Path, "config", "core.fsmonitor", touch("fsmonitor"))
	run(t, ws.Path, "config", "diff.external", touch("external"))
	hooks := filepath.Join(repo, ".git", "hooks")
	for _, h := range []string{"post-index-change", "pre-commit", "post-checkout", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\n"+touch("hook-"+h)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(repo, ".git", "info", "attributes"), "*.md filter=proc\n")
	write(t, filepath.Join(ws.Path, ".gitattributes"), "* filter=evil\n")
	write(t, filepath.Join(ws.Path, "README"), "HELLO\n") // the same size: git must read it
	write(t, filepath.Join(ws.Path, "new.txt"), "brand new\n")
	write(t, filepath.Join(ws.Path, "notes.md"), "notes\n")
	return ws, marks
}

func noMarks(t *testing.T, marks string) {
	t.Helper()
	entries, _ := os.ReadDir(marks)
	for _, e := range entries {
		t.Errorf("git ran the agent's %s", e.Name())
	}
}

// TestDiffRunsNothingOfTheAgent: /diff of a worktree whose agent set
// filters, a fsmonitor, an external diff and hooks runs none of them,
// and still shows every change.
func TestDiffRunsNothingOfTheAgent(t *testing.T) {
	m := newManager(t, t.TempDir(), 0)
	_, marks := hostileRepo(t, m)
	d, err := m.Diff(t.Context(), ref("1"))
	noMarks(t, marks)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"+HELLO", "+brand new", "+notes", "+* filter=evil"} {
		if !strings.Contains(d.Patch, s) {
			t.Errorf("patch lacks %q:\n%s", s, d.Patch)
		}
	}
}

// TestRemoveRunsNothingOfTheAgent: removing such a worktree (it is
// dirty, so it is kept) runs none of them either.
func TestRemoveRunsNothingOfTheAgent(t *testing.T) {
	m := newManager(t, t.TempDir(), 0)
	_, marks := hostileRepo(t, m)
	if _, err := m.Remove(t.Context(), ref("1")); err == nil {
		t.Fatal("Remove of a dirty worktree succeeded")
	}
	noMarks(t, marks)
}

// TestRemoveThroughSymlinkedParent: the agent moves its workspace's
// parent away and puts a symlink to a directory outside in its place;
// the thread's removal deletes nothing outside, and says why it left the
// workspace alone.
func TestRemoveThroughSymlinkedParent(t *testing.T) {
	data, outside := t.TempDir(), t.TempDir()
	m := newManager(t, data, 0)
	ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Dir}, ref("1"), "")
	if err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(outside, filepath.Base(ws.Path), "precious")
	if err := os.MkdirAll(filepath.Dir(precious), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, precious, "keep me")
	parent := filepath.Dir(ws.Path)
	if err := os.Rename(parent, parent+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, parent); err != nil {
		t.Fatal(err)
	}
	_, err = m.Remove(t.Context(), ref("1"))
	if b, rerr := os.ReadFile(precious); rerr != nil || string(b) != "keep me" {
		t.Fatalf("the file outside the data directory: %q, %v; want it kept (Remove said %v)", b, rerr, err)
	}
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Remove = %v, want it to say the parent is not a directory", err)
	}
}

// TestRemoveKeepsCheckedOutSubmodule: git is not run inside a submodule
// (its configuration is the agent's too), so a worktree with one checked
// out is kept, as git worktree remove would.
func TestRemoveKeepsCheckedOutSubmodule(t *testing.T) {
	m := newManager(t, t.TempDir(), 0)
	repo, other := newRepo(t), newRepo(t)
	ws, err := m.Open(t.Context(), workspace.Agent{Mode: workspace.Worktree, Cwd: repo}, ref("1"), "sub")
	if err != nil {
		t.Fatal(err)
	}
	run(t, ws.Path, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", other, "sub")
	run(t, ws.Path, "commit", "--quiet", "-m", "a submodule")
	if _, err := m.Remove(t.Context(), ref("1")); err == nil || !strings.Contains(err.Error(), "kept") {
		t.Errorf("Remove = %v, want the worktree kept", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Path, "sub", "README")); err != nil {
		t.Errorf("the submodule's checkout: %v", err)
	}
}
