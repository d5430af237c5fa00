package mcpgate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readFile checks that name (relative to the workspace, or absolute) is a
// regular file inside the workspace once symlinks are resolved and no
// larger than the limit, and reads it. Its errors say why a file is
// refused, for the agent.
func (s *Server) readFile(name string) (File, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, p)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, fmt.Errorf("send_file: %s does not exist", name)
		}
		return File{}, fmt.Errorf("send_file: %s: %w", name, err)
	}
	if !within(s.root, resolved) {
		return File{}, fmt.Errorf("send_file: %s is outside the workspace %s (symlinks are resolved)", name, s.root)
	}
	// O_NOFOLLOW: the last element cannot have become a symlink since;
	// O_NONBLOCK: a fifo does not block the open.
	fd, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, fmt.Errorf("send_file: %s: %w", name, err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return File{}, fmt.Errorf("send_file: %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("send_file: %s is not a regular file (%s)", name, kind(st.Mode()))
	}
	if st.Size() > s.max {
		return File{}, fmt.Errorf("send_file: %s is %d bytes, more than the %d bytes this thread accepts", name, st.Size(), s.max)
	}
	data, err := io.ReadAll(io.LimitReader(fd, s.max+1))
	if err != nil {
		return File{}, fmt.Errorf("send_file: %s: %w", name, err)
	}
	if int64(len(data)) > s.max {
		return File{}, fmt.Errorf("send_file: %s grew past the %d bytes this thread accepts", name, s.max)
	}
	return File{Name: filepath.Base(resolved), Path: resolved, Data: data}, nil
}

// within reports whether p is root or below it; both are clean absolute
// paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a fifo"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "mode " + m.String()
}
