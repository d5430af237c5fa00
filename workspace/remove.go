package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The directories below a template's fixed part (the data directory's
// workspaces, or where an absolute workspaceDir points) are made by the
// gateway, but without a sandbox the agent can rename them and put
// symlinks in their place: a thread's removal by path would then follow
// them out of the data directory. So a removal opens the base with
// os.Root, refuses a symlink on the way down and removes beneath it:
// nothing outside the base is ever touched.

// templateBase returns the fixed directory of a workspaceDir template: its
// path up to the first element with a placeholder, under dataDir when
// relative.
func templateBase(tmpl, dataDir string) string {
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	els := strings.Split(filepath.ToSlash(tmpl), "/")
	for i, el := range els {
		if strings.Contains(el, "{") {
			els = els[:i]
			break
		}
	}
	p := filepath.FromSlash(strings.Join(els, "/"))
	if filepath.IsAbs(tmpl) && p == "" {
		p = "/"
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dataDir, p)
	}
	return filepath.Clean(p)
}

// base returns the directory r's removal stays beneath: the base recorded
// at its making; for a record from before, the data directory's
// workspaces when r is there, else r's parent.
func (m *Manager) base(r *record) string {
	if r.Base != "" {
		return r.Base
	}
	if ws := filepath.Join(m.o.DataDir, "workspaces"); within(ws, r.Path) {
		return ws
	}
	return filepath.Dir(r.Path)
}

// within reports whether p is strictly below dir (both clean and
// absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// removeBeneath removes path and what it holds, through an os.Root of
// base: a path element that is a symlink is refused, and no symlink
// leads the removal out of base. A missing path is no error.
func removeBeneath(base, path string) error {
	if !within(base, path) {
		return fmt.Errorf("workspace: cannot remove %s: it is not below %s", path, base)
	}
	rel, _ := filepath.Rel(base, path)
	root, err := os.OpenRoot(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("workspace: cannot remove %s: %w", path, err)
	}
	defer root.Close()
	els := strings.Split(rel, string(filepath.Separator))
	for i := range els[:len(els)-1] {
		p := filepath.Join(els[:i+1]...)
		st, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("workspace: cannot remove %s: %w", path, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("workspace: cannot remove %s: %s is not a directory (%s), so it was left alone", path, filepath.Join(base, p), st.Mode().Type())
		}
	}
	if err := root.RemoveAll(rel); err != nil {
		return fmt.Errorf("workspace: cannot remove %s: %w", path, err)
	}
	return nil
}
