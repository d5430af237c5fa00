package mcpgate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/acpgw/gateway/channels"
)

// readFile opens name (relative to the workspace, or absolute) through
// the workspace's os.Root, so that no path of it, however its
// directories are swapped for symlinks meanwhile, leads outside; checks
// on the opened file that it is a regular file no larger than the limit,
// and reads it. Its errors say why a file is refused, for the agent.
func (s *Server) readFile(name string) (File, error) {
	rel, err := s.relative(name)
	if err != nil {
		return File{}, err
	}
	// O_NONBLOCK: a fifo does not block the open.
	fd, err := s.fsRoot.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, fmt.Errorf("send_file: %s does not exist", name)
		}
		if strings.Contains(err.Error(), "path escapes from parent") { // os.Root's words
			return File{}, fmt.Errorf("send_file: %s is outside the workspace %s (symlinks are resolved)", name, s.root)
		}
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
	// The bytes are counted before they are read: what waits for the
	// thread stays within the quota.
	release, err := s.reserve(name, st.Size())
	if err != nil {
		return File{}, err
	}
	data, err := io.ReadAll(io.LimitReader(fd, st.Size()+1))
	if err != nil {
		release()
		return File{}, fmt.Errorf("send_file: %s: %w", name, err)
	}
	if int64(len(data)) > st.Size() {
		release()
		return File{}, fmt.Errorf("send_file: %s grew while it was read; send it again once it is written", name)
	}
	return File{Name: channels.ShowName(filepath.Base(rel)), Path: filepath.Join(s.root, rel), Data: data, Release: release}, nil
}

// reserve counts n bytes against the thread's queue and returns what
// gives them back (safe to call more than once), or refuses when they
// would pass the quota and something waits already.
func (s *Server) reserve(name string, n int64) (func(), error) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.queued > 0 && s.queued+n > s.quota {
		return nil, fmt.Errorf("send_file: %s was not sent: %d bytes of files sent before it are still waiting to be posted, and this thread queues at most %d; send it again once they are posted (send_file returns when a file is posted)", name, s.queued, s.quota)
	}
	s.queued += n
	var once sync.Once
	return func() {
		once.Do(func() {
			s.qmu.Lock()
			s.queued -= n
			s.qmu.Unlock()
		})
	}, nil
}

// relative returns name as a path relative to the workspace: a relative
// name as it is, an absolute one below the workspace (as written, or once
// its symlinks are resolved) without the workspace's part. What it
// returns only names the file: the open through the os.Root decides
// whether it is inside.
func (s *Server) relative(name string) (string, error) {
	if !filepath.IsAbs(name) {
		return filepath.Clean(name), nil
	}
	p := filepath.Clean(name)
	if within(s.root, p) {
		return filepath.Rel(s.root, p)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("send_file: %s does not exist", name)
		}
		return "", fmt.Errorf("send_file: %s: %w", name, err)
	}
	if !within(s.root, resolved) {
		return "", fmt.Errorf("send_file: %s is outside the workspace %s (symlinks are resolved)", name, s.root)
	}
	return filepath.Rel(s.root, resolved)
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
