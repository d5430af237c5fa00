package owner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxImageFile bounds an image file the agent links to that the thread
// reads (the platform's upload limit is checked after).
const maxImageFile = 25 << 20

// readImage reads the file at the absolute path p that an image link of
// the agent names, for the lane's goroutine: only a regular file inside
// the session's working directory, opened through an os.Root so that no
// symlink, however swapped meanwhile, leads outside it. An agent cannot
// make the gateway show a file of the host this way (its secrets, the
// other threads' workspaces).
func (t *Thread) readImage(p string) ([]byte, error) {
	ws := t.workspace.Load()
	if ws == nil || *ws == "" {
		return nil, errors.New("the thread has no working directory")
	}
	return readWithin(*ws, p)
}

// readWithin reads the regular file p (absolute) inside the directory
// root, at most maxImageFile bytes.
func readWithin(root, p string) ([]byte, error) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
	if err != nil || !filepath.IsAbs(p) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is outside the working directory %s", p, root)
	}
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := dir.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a fifo does not block
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() > maxImageFile {
		return nil, fmt.Errorf("%s has %d bytes, more than %d", p, st.Size(), maxImageFile)
	}
	return io.ReadAll(io.LimitReader(f, maxImageFile))
}
