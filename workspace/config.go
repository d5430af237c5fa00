package workspace

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Mode is where an agent's threads work: Shared, Dir or Worktree.
type Mode string

// The modes of agents.list.NAME.workspace.
const (
	// Shared is the agent's cwd for every thread.
	Shared Mode = "shared"
	// Dir is a directory per thread.
	Dir Mode = "dir"
	// Worktree is a git worktree per thread, on a branch of its own.
	Worktree Mode = "worktree"
)

// Config is the workspace section.
type Config struct {
	// Keep is how long the workspace of an idle thread is kept before
	// Sweep removes it (a worktree with changes not committed, and a
	// branch with commits, are kept regardless). 0 (the default) keeps
	// workspaces until their thread is deleted.
	Keep time.Duration `koanf:"keep" validate:"min=0"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config { return Config{} }

// placeholder matches a {name} of a workspaceDir template.
var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

// Placeholders are the names a workspaceDir template may use.
var Placeholders = []string{"{platform}", "{channel}", "{thread}"}

// DefaultTemplate is where a thread's directory or worktree goes when its
// agent names no template, relative to the data directory.
const DefaultTemplate = "workspaces/{platform}/{channel}/{thread}"

// CheckTemplate reports what is wrong with a workspaceDir template, as a
// sentence to put after its key, or "" when it is good: it must name
// {thread} (or every thread would share one directory), use only the
// placeholders {platform}, {channel} and {thread}, and have no ".."
// element. It does no I/O.
func CheckTemplate(tmpl string) string {
	if tmpl == "" {
		return ""
	}
	for _, p := range placeholder.FindAllString(tmpl, -1) {
		if !slices.Contains(Placeholders, p) {
			return fmt.Sprintf("unknown placeholder %s (allowed: %s)", p, strings.Join(Placeholders, " "))
		}
	}
	if !strings.Contains(tmpl, "{thread}") {
		return fmt.Sprintf("must contain {thread}, or every thread would share one directory (allowed placeholders: %s), got %q", strings.Join(Placeholders, " "), tmpl)
	}
	for _, el := range strings.Split(filepath.ToSlash(tmpl), "/") {
		if el == ".." {
			return fmt.Sprintf("must not contain a .. element, got %q", tmpl)
		}
	}
	return ""
}
