package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The values of agents.sandbox.
const (
	// Auto is the best sandbox this machine has (today: bubblewrap).
	Auto = "auto"
	// Bwrap is bubblewrap, refused where it does not work.
	Bwrap = "bwrap"
	// Off runs agents as the gateway's own user, unsandboxed.
	Off = "off"
)

// Modes are the allowed values of agents.sandbox, in the order shown.
var Modes = []string{Auto, Bwrap, Off}

// The values of agents.list.NAME.network.
const (
	// NetFull reaches any destination outside the host (through the
	// egress proxy), and the host only where Allow lists it.
	NetFull = "full"
	// NetNone reaches nothing: only the sandbox's own loopback.
	NetNone = "none"
	// NetAllow reaches only the destinations Allow lists.
	NetAllow = "allow"
)

// NetModes are the allowed values of agents.list.NAME.network.
var NetModes = []string{NetFull, NetNone, NetAllow}

// Network is an agent's network policy.
type Network struct {
	// Mode is NetFull, NetNone or NetAllow ("" = NetNone).
	Mode string
	// Allow lists "host:port" destinations reached (in NetFull, the only
	// way to a loopback or host-local address).
	Allow []string
	// Deny lists "host:port" destinations never reached, even when
	// allowed: the gateway's own listeners.
	Deny []string
}

// Spec is what one agent process's sandbox holds. The configuration fills
// the agent's part; the session adds the thread's (Workspace, Sockets).
type Spec struct {
	// Home is the agent's own directory, read-write, made (0700) when
	// missing; $HOME inside.
	Home string
	// ReadOnly and ReadWrite are more paths the operator gives the agent
	// (agents.list.NAME.sandbox.readOnly, readWrite); a missing one is
	// left out.
	ReadOnly  []string
	ReadWrite []string
	// Hide are the gateway's own paths (its data directory, configuration
	// file, event log directory, other agents' homes): never visible,
	// even under a bound path, except for the paths granted above and
	// below that lie inside them.
	Hide []string
	// Exe is the gateway's executable, bound read-only at its path.
	Exe string
	// Network is where the agent may connect.
	Network Network
	// Workspace is the thread's workspace, read-write.
	Workspace string
	// Sockets are unix sockets the agent connects to (the session's MCP
	// server), bound at their paths.
	Sockets []string
	// Git is the repository of a workspace that is a git worktree.
	Git Git
}

// Git is the repository behind a worktree workspace. Its common
// directory is shown read-only (the agent reads the history, its status
// and diffs; it cannot change the operator's branches, objects,
// configuration or hooks, which git would run in the operator's own
// checkout), the other worktrees' directories in it not at all, and the
// worktree's own directory (HEAD, index) read-write. An operator who lets
// the agent commit lists the common directory in ReadWrite.
type Git struct {
	// Common is the repository's common git directory ("" = none).
	Common string
	// Own is the worktree's git directory, inside Common.
	Own string
}

// Clone returns a copy of s that shares no slice with it.
func (s Spec) Clone() Spec {
	s.ReadOnly, s.ReadWrite, s.Hide = slices.Clone(s.ReadOnly), slices.Clone(s.ReadWrite), slices.Clone(s.Hide)
	s.Network.Allow, s.Network.Deny = slices.Clone(s.Network.Allow), slices.Clone(s.Network.Deny)
	s.Sockets = slices.Clone(s.Sockets)
	return s
}

// Proc is the process to run in the sandbox.
type Proc struct {
	// Command is the program and its arguments; a program without a "/"
	// is found in Env's PATH.
	Command []string
	// Dir is the working directory inside ("" = Workspace).
	Dir string
	// Env is its environment (KEY=VALUE).
	Env []string
}

// Wrapped is a process prepared to run in its sandbox. Close it when the
// process has exited.
type Wrapped struct {
	// Args is the command to run: bwrap, its options, and the inner
	// command.
	Args []string
	// Env is the environment to run Args with (the process's, with HOME,
	// TMPDIR and PWD set for inside).
	Env []string
	// Mounts are the paths the sandbox shows, one line each ("ro /usr"),
	// for logs and gateway check.
	Mounts []string

	closers []func() error
}

// Close releases what the sandbox held on the host (its egress proxy, its
// private directory). It is safe to call more than once.
func (w *Wrapped) Close() error {
	var errs []error
	for i := len(w.closers) - 1; i >= 0; i-- {
		errs = append(errs, w.closers[i]())
	}
	w.closers = nil
	return errors.Join(errs...)
}

// Wrap prepares p to run in s: it finds bwrap (Available), resolves the
// paths, makes Home, and returns the command. ctx bounds the start of what
// the sandbox needs on the host (the egress proxy, which lives until
// Close). It returns an error saying what is wrong, and the key to change
// where one can fix it.
func (s Spec) Wrap(ctx context.Context, p Proc, log *slog.Logger) (*Wrapped, error) {
	bwrap, err := Available()
	if err != nil {
		return nil, err
	}
	if len(p.Command) == 0 {
		return nil, errors.New("sandbox: the command is empty")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.Home != "" {
		if err := os.MkdirAll(s.Home, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: the agent's home: %w", err)
		}
	}
	dir := p.Dir
	if dir == "" {
		dir = s.Workspace
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("sandbox: the working directory: %w", err)
		}
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the working directory: %w", err)
	}
	command := slices.Clone(p.Command)
	if !strings.Contains(command[0], "/") {
		found, err := lookPath(command[0], getenv(p.Env, "PATH"))
		if err != nil {
			return nil, fmt.Errorf("sandbox: the agent's program: %w", err)
		}
		command[0] = found
	} else if command[0], err = filepath.Abs(command[0]); err != nil {
		return nil, fmt.Errorf("sandbox: the agent's program: %w", err)
	}
	w := &Wrapped{}
	net, err := s.network(ctx, w, log)
	if err != nil {
		w.Close()
		return nil, err
	}
	pl, err := s.plan(command, dir, getenv(p.Env, "PATH"), net)
	if err != nil {
		w.Close()
		return nil, err
	}
	w.Mounts = pl.describe()
	args := []string{bwrap,
		"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
	}
	args = append(args, pl.args()...)
	args = append(args, "--chdir", dir, "--")
	args = append(args, net.inner...)
	args = append(args, command...)
	w.Args = args
	w.Env = s.environ(p.Env, dir)
	return w, nil
}

// environ is env as the agent has it inside: HOME its home, TMPDIR its
// own /tmp, PWD dir, and the XDG directories that point outside what it
// can write left out.
func (s Spec) environ(env []string, dir string) []string {
	writable := append([]string{s.Home, s.Workspace, "/tmp"}, s.ReadWrite...)
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "TMPDIR", "PWD":
			continue
		case "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME":
			if !slices.ContainsFunc(writable, func(w string) bool { return w != "" && within(v, w) }) {
				continue
			}
		}
		out = append(out, kv)
	}
	if s.Home != "" {
		out = append(out, "HOME="+s.Home)
	}
	return append(out, "TMPDIR=/tmp", "PWD="+dir)
}

// getenv returns the value of k in env ("" when unset).
func getenv(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}

// lookPath finds the program name in path (a PATH value), as exec.LookPath
// does with the gateway's own.
func lookPath(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		f := filepath.Join(d, name)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return f, nil
		}
	}
	return "", fmt.Errorf("%q is not in the agent's PATH (%s)", name, path)
}

// within reports whether path is dir or lies inside it (both clean and
// absolute).
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}
