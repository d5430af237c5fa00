package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
)

// ErrSharedTooWide: a shared workspace that is / or the home directory of
// the gateway's user, where the agent and send_file would reach every
// file the gateway can read (its configuration, its data, ~/.ssh).
var ErrSharedTooWide = errors.New("a shared workspace must be a project directory, not / or the gateway's home directory")

// CheckShared returns nil when dir may be a shared workspace, and an
// error wrapping ErrSharedTooWide, naming dir and what to set instead,
// when it is / or the gateway user's home directory ($HOME, or the
// account's) once symlinks are resolved. It reads the file system and the
// account database.
func CheckShared(dir string) error {
	d := resolved(dir)
	if d == "/" {
		return fmt.Errorf("workspace: the shared workspace is / (%s): %w; set agents.list.NAME.cwd to a project directory (a systemd unit: WorkingDirectory=), or workspace: dir or worktree", dir, ErrSharedTooWide)
	}
	var homes []string
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		homes = append(homes, h)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		homes = append(homes, u.HomeDir)
	}
	for _, h := range homes {
		if d == resolved(h) {
			return fmt.Errorf("workspace: the shared workspace is the home directory %s: %w; set agents.list.NAME.cwd to a project directory, or workspace: dir or worktree", dir, ErrSharedTooWide)
		}
	}
	return nil
}

// resolved is dir absolute, clean and with its symlinks resolved where
// it exists.
func resolved(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return filepath.Clean(dir)
}
