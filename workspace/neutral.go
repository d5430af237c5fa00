package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A worktree's repository configuration is the agent's to write (git
// config, .git/info/attributes, hooks): a clean filter there runs when git
// reads the worktree's files (git add, git status), a smudge filter when
// it writes them. Overriding each driver with -c cannot be done in
// advance (their names are the agent's), and a list read first races the
// agent's writes. So what only reads the worktree runs git with a
// repository directory of the gateway's own: a fresh GIT_DIR with a
// configuration the gateway wrote, the worktree's objects as alternates
// (read-only), a copy of its index and ignore list, no hooks, no
// attributes file beside the worktree's .gitattributes, no global or
// system configuration. A filter a .gitattributes names is then a driver
// no configuration defines: git reads the file as it is.

// neutral is a private repository directory for read-only git runs over
// one worktree.
type neutral struct {
	worktree string
	dir      string   // the private GIT_DIR
	env      []string // the environment of its git runs
}

// openNeutral makes the private repository directory for the worktree at
// path. Close removes it.
func openNeutral(ctx context.Context, path string) (*neutral, error) {
	out, err := git(ctx, path, nil, "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-path", "index", "--show-object-format", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("workspace: git rev-parse said %q, want the common directory, the index, the object format and HEAD", out)
	}
	common, index, format, head := lines[0], lines[1], lines[2], lines[3]
	if format != "sha1" && format != "sha256" {
		return nil, fmt.Errorf("workspace: unknown object format %q", format)
	}
	dir, err := os.MkdirTemp("", "acp-git-*")
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	n := &neutral{worktree: path, dir: dir}
	if err := n.fill(common, index, format, head, path); err != nil {
		n.Close()
		return nil, err
	}
	n.env = []string{
		"GIT_DIR=" + dir,
		"GIT_WORK_TREE=" + path,
		"GIT_INDEX_FILE=" + filepath.Join(dir, "index"),
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(dir, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(common, "objects"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(dir, "global"),
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
	}
	return n, nil
}

// fill writes the private directory's files.
func (n *neutral) fill(common, index, format, head, worktree string) error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "info"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o700); err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	if format != "sha1" {
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = " + format + "\n"
	}
	config += "[core]\n\thooksPath = /dev/null\n\tfsmonitor = false\n\tattributesFile = /dev/null\n"
	// The worktree may be another uid's (a sandbox): the gateway reads it
	// knowingly.
	global := "[safe]\n\tdirectory = " + quoteConfig(worktree) + "\n"
	files := map[string]string{
		"config": config,
		"global": global,
		"HEAD":   head + "\n", // detached where the worktree is
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(n.dir, name), []byte(text), 0o600); err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
	}
	for from, to := range map[string]string{index: "index", filepath.Join(common, "info", "exclude"): "info/exclude"} {
		if err := copyRegular(from, filepath.Join(n.dir, to)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("workspace: %w", err)
		}
	}
	return nil
}

// quoteConfig quotes s as a git configuration value.
func quoteConfig(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// copyRegular copies the regular file from (a symlink or anything else is
// refused) to a new file to.
func copyRegular(from, to string) error {
	st, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", from)
	}
	return copyFile(from, to)
}

// Close removes the private directory.
func (n *neutral) Close() { os.RemoveAll(n.dir) }

// git runs git over the worktree with the private directory.
func (n *neutral) git(ctx context.Context, args ...string) (string, error) {
	return git(ctx, n.worktree, n.env, args...)
}
