package sandbox

// What the sandbox shows: the mounts, ordered so that a path's parent is
// mounted before it, and a mask after what it masks.

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// systemPaths are the host's read-only paths programs need, where present
// (a symlink, as /lib on a merged /usr, is made the same symlink).
var systemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"}

// alwaysHidden are host files under the system paths no agent reads: the
// password hashes and the SSH host keys (an agent of a gateway run as
// root would read them, as root).
var alwaysHidden = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/ssh/ssh_host_*_key"}

// layer orders mounts at the same depth: a later layer covers an earlier.
type layer int

const (
	layerBase     layer = iota // /tmp, /dev, /proc
	layerSystem                // systemPaths
	layerNamed                 // the paths the command names
	layerOperator              // Spec.ReadOnly, Spec.ReadWrite
	layerMask                  // Spec.Hide where a bind above shows it
	layerGranted               // workspace, home, executable, sockets
)

// op is one mount of the sandbox.
type op struct {
	kind  string // ro, rw, ro-try, rw-try, tmpfs, null, symlink, dev, proc
	src   string // the host path (the target, for a symlink)
	dst   string // the path inside
	real  string // src with symlinks resolved
	layer layer
}

// mountPlan is the sandbox's mounts, in order.
type mountPlan struct{ ops []op }

// plan returns the mounts of s for command (its program absolute), run
// in dir, with the agent's PATH path, and net's binds.
func (s Spec) plan(command []string, dir, path string, net *netPlan) (*mountPlan, error) {
	var ops []op
	add := func(kind, src, dst string, l layer) {
		real, err := filepath.EvalSymlinks(src)
		if err != nil {
			real = filepath.Clean(src)
		}
		ops = append(ops, op{kind: kind, src: src, dst: filepath.Clean(dst), real: real, layer: l})
	}
	ops = append(ops, op{kind: "tmpfs", dst: "/tmp"}, op{kind: "dev", dst: "/dev"}, op{kind: "proc", dst: "/proc"})
	for _, p := range systemPaths {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				ops = append(ops, op{kind: "symlink", src: target, dst: p, layer: layerSystem})
			}
		case fi.IsDir():
			add("ro", p, p, layerSystem)
		}
	}
	// The paths the command names.
	var links []op
	named := func(p string) {
		if !filepath.IsAbs(p) || slices.ContainsFunc(systemPaths, func(sys string) bool { return within(p, sys) }) {
			return
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		src, kind := real, "ro"
		if i := strings.Index(real, "/node_modules/"); i > 0 {
			src = real[:i]
		} else if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			kind = "rw" // a state directory the command names
		}
		add(kind, src, src, layerNamed)
		if filepath.Clean(p) != real {
			links = append(links, op{kind: "symlink", src: real, dst: filepath.Clean(p), layer: layerNamed})
		}
	}
	named(command[0])
	if interp := shebang(command[0]); len(interp) > 0 {
		named(interp[0])
		if filepath.Base(interp[0]) == "env" {
			for _, a := range interp[1:] {
				if !strings.HasPrefix(a, "-") {
					if f, err := lookPath(a, path); err == nil {
						named(f)
					}
					break
				}
			}
		}
	}
	for _, a := range command[1:] {
		if _, err := os.Lstat(a); err == nil {
			named(a)
		}
	}
	for _, p := range s.ReadOnly {
		add("ro-try", p, p, layerOperator)
	}
	for _, p := range s.ReadWrite {
		add("rw-try", p, p, layerOperator)
	}
	// What the gateway grants.
	ws := cmp.Or(s.Workspace, dir)
	if filepath.Clean(ws) == "/" {
		return nil, fmt.Errorf("sandbox: the agent's workspace is / (the whole machine); give the agent a cwd (agents.list.NAME.cwd) or a workspace of its own (agents.list.NAME.workspace: dir)")
	}
	add("rw", ws, ws, layerGranted)
	if !within(dir, ws) {
		add("rw", dir, dir, layerGranted)
	}
	if s.Home != "" {
		add("rw", s.Home, s.Home, layerGranted)
	}
	if s.Exe != "" {
		add("ro", s.Exe, s.Exe, layerGranted)
	}
	for _, sock := range s.Sockets {
		add("rw", sock, sock, layerGranted)
	}
	if g := s.Git; g.Common != "" && !slices.ContainsFunc(s.ReadWrite, func(p string) bool { return within(g.Common, p) }) {
		add("ro", g.Common, g.Common, layerGranted)
		others := filepath.Join(g.Common, "worktrees")
		ops = append(ops, op{kind: "tmpfs", dst: others, real: others, layer: layerGranted})
		if g.Own != "" && within(g.Own, others) {
			add("rw", g.Own, g.Own, layerGranted)
		}
	}
	if net != nil {
		for _, b := range net.binds {
			add(b.kind, b.src, b.dst, layerGranted)
		}
	}
	ops, err := s.hide(ops)
	if err != nil {
		return nil, err
	}
	// A symlink for a named path only where nothing bound shows that
	// path already.
	for _, l := range links {
		covered := slices.ContainsFunc(ops, func(o op) bool {
			return o.kind != "symlink" && o.kind != "tmpfs" && o.kind != "null" && o.layer > layerBase && within(l.dst, o.dst)
		})
		if !covered && !slices.ContainsFunc(ops, func(o op) bool { return o.dst == l.dst }) {
			ops = append(ops, l)
		}
	}
	slices.SortStableFunc(ops, func(a, b op) int {
		return cmp.Or(cmp.Compare(depth(a.dst), depth(b.dst)), cmp.Compare(a.layer, b.layer))
	})
	return &mountPlan{ops: ops}, nil
}

// hide applies s.Hide (and alwaysHidden) to ops: a bind the operator or
// the command asked for inside a hidden path is left out; a hidden path
// inside a bind is masked there (an empty directory, or an empty file);
// a granted bind may lie inside a hidden path (the agent's home in the
// data directory), but not be one.
func (s Spec) hide(ops []op) ([]op, error) {
	type hidden struct {
		path string
		dir  bool
	}
	var hides []hidden
	paths := slices.Clone(s.Hide)
	for _, g := range alwaysHidden {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	for _, h := range paths {
		if h == "" {
			continue
		}
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // nothing there to show
		}
		fi, err := os.Stat(real)
		if err != nil {
			continue
		}
		hides = append(hides, hidden{path: real, dir: fi.IsDir()})
	}
	var out, masks []op
	for _, o := range ops {
		if o.layer == layerBase || o.kind == "symlink" {
			out = append(out, o)
			continue
		}
		keep := true
		for _, h := range hides {
			switch {
			case within(o.real, h.path):
				if o.layer != layerGranted {
					keep = false
				} else if o.real == h.path {
					return nil, fmt.Errorf("sandbox: %s is one of the gateway's own paths (its data directory, configuration or event logs); the agent cannot be given it", o.dst)
				}
			case within(h.path, o.real):
				rel, _ := filepath.Rel(o.real, h.path)
				kind := "null"
				if h.dir {
					kind = "tmpfs"
				}
				masks = append(masks, op{kind: kind, dst: filepath.Join(o.dst, rel), layer: layerMask})
			}
		}
		if keep {
			out = append(out, o)
		}
	}
	for _, m := range masks {
		if !slices.ContainsFunc(out, func(o op) bool { return o.dst == m.dst && o.layer == layerMask }) {
			out = append(out, m)
		}
	}
	return out, nil
}

// shebang returns the fields of the "#!" line of the file at path (nil
// when it has none).
func shebang(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 256).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return nil
	}
	return strings.Fields(rest)
}

// depth is the number of elements of the clean absolute path p.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// args returns the plan as bwrap's options.
func (pl *mountPlan) args() []string {
	var out []string
	for _, o := range pl.ops {
		switch o.kind {
		case "ro":
			out = append(out, "--ro-bind", o.src, o.dst)
		case "rw":
			out = append(out, "--bind", o.src, o.dst)
		case "ro-try":
			out = append(out, "--ro-bind-try", o.src, o.dst)
		case "rw-try":
			out = append(out, "--bind-try", o.src, o.dst)
		case "tmpfs":
			out = append(out, "--tmpfs", o.dst)
		case "null":
			out = append(out, "--ro-bind", "/dev/null", o.dst)
		case "symlink":
			out = append(out, "--symlink", o.src, o.dst)
		case "dev":
			out = append(out, "--dev", o.dst)
		case "proc":
			out = append(out, "--proc", o.dst)
		}
	}
	return out
}

// describe returns a line per mount ("ro /usr", "hidden /data").
func (pl *mountPlan) describe() []string {
	var out []string
	for _, o := range pl.ops {
		switch o.kind {
		case "ro", "ro-try":
			out = append(out, "ro "+o.dst)
		case "rw", "rw-try":
			out = append(out, "rw "+o.dst)
		case "tmpfs", "null":
			if o.layer == layerMask {
				out = append(out, "hidden "+o.dst)
			} else {
				out = append(out, "private "+o.dst)
			}
		case "dev", "proc":
			out = append(out, "private "+o.dst)
		case "symlink":
			out = append(out, "symlink "+o.dst+" -> "+o.src)
		}
	}
	return out
}
