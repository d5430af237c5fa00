package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/acpgw/gateway/internal/flock"
)

var (
	// ErrLocked means another Writer, in this process or another, holds
	// the session's log.
	ErrLocked = errors.New("session log is locked by another writer")
	// ErrNewline means a frame given to Write contains a newline: the
	// caller passed more or less than one JSON-RPC line.
	ErrNewline = errors.New("frame contains a newline")
)

// retainBuf is the largest write buffer a Writer keeps between writes.
const retainBuf = 64 << 10

// A Writer appends one session's frames to its log. Its methods are safe
// for concurrent use; the order of Write calls is the order of the lines.
type Writer struct {
	path        string // the current segment
	maxBytes    int64
	maxSegments int

	mu     sync.Mutex // guards the fields below
	lock   *os.File   // the flocked lock file; nil once closed
	f      *os.File   // the current segment, opened for append; nil if a rotation failed to reopen it
	size   int64      // bytes in f
	buf    []byte     // reused for frame + '\n'
	closed bool
}

// Open opens sessionID's log in dir for appending, creating dir and the
// current segment (PathFor(dir, sessionID)) as needed. dir is used as given;
// c.Dir is for the caller to resolve. Zero limits in c take the defaults;
// ranges are the config validator's business, so tests may use tiny
// segments. Open cuts off a torn last line left by a crash and deletes
// segments beyond c.MaxSegments.
//
// Open does I/O and does not block on the lock: while another Writer,
// in this process or another, holds the session, it fails with an error
// wrapping ErrLocked. The lock is released by Close or when the process
// exits.
func Open(dir, sessionID string, c Config) (*Writer, error) {
	if sessionID == "" {
		return nil, errors.New("eventlog: open: empty session id")
	}
	if c.MaxSegmentBytes == 0 {
		c.MaxSegmentBytes = DefaultMaxSegmentBytes
	}
	if c.MaxSegments == 0 {
		c.MaxSegments = DefaultMaxSegments
	}
	if c.MaxSegmentBytes < 0 || c.MaxSegments < 0 {
		return nil, fmt.Errorf("eventlog: open: negative limits (maxSegmentBytes %d, maxSegments %d)", c.MaxSegmentBytes, c.MaxSegments)
	}
	w := &Writer{path: PathFor(dir, sessionID), maxBytes: c.MaxSegmentBytes, maxSegments: c.MaxSegments}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("eventlog: open %s: %w", w.path, err)
	}
	lockPath := strings.TrimSuffix(w.path, segmentExt) + lockExt
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("eventlog: open %s: %w", w.path, err)
	}
	if err := flock.Try(lock); err != nil {
		lock.Close()
		if errors.Is(err, flock.ErrLocked) {
			err = ErrLocked
		}
		return nil, fmt.Errorf("eventlog: open %s: %w", w.path, err)
	}
	w.lock = lock
	if err := w.openCurrentLocked(); err != nil {
		lock.Close()
		return nil, err
	}
	if err := w.pruneLocked(); err != nil {
		w.f.Close()
		lock.Close()
		return nil, err
	}
	return w, nil
}

// Path returns the path of the current segment. It does no I/O.
func (w *Writer) Path() string { return w.path }

// Write appends frame and a newline to the log in one write call. frame is
// one JSON-RPC line without its newline; one containing '\n' is refused
// with an error wrapping ErrNewline. Write rotates first when the frame
// would push a non-empty current segment past the size limit.
//
// Write does file I/O under the Writer's mutex, so concurrent calls are
// serialized. On error nothing was appended, unless cutting a failed
// partial write back off failed too (the error says so). After Close it
// returns an error wrapping fs.ErrClosed.
func (w *Writer) Write(frame []byte) error {
	if bytes.IndexByte(frame, '\n') >= 0 {
		return fmt.Errorf("eventlog: write %s: %w", w.path, ErrNewline)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("eventlog: write %s: %w", w.path, fs.ErrClosed)
	}
	n := int64(len(frame)) + 1
	if w.f == nil { // a failed rotation could not reopen it
		if err := w.openCurrentLocked(); err != nil {
			return err
		}
	}
	if w.size > 0 && w.size+n > w.maxBytes {
		if err := w.rotateLocked(); err != nil {
			return err
		}
	}
	buf := append(append(w.buf[:0], frame...), '\n')
	m, err := w.f.Write(buf)
	if cap(buf) <= retainBuf {
		w.buf = buf[:0]
	} else {
		w.buf = nil
	}
	if err != nil {
		err = fmt.Errorf("eventlog: write %s: %w", w.path, err)
		if m > 0 {
			if terr := w.f.Truncate(w.size); terr != nil {
				w.size += int64(m)
				return errors.Join(err, fmt.Errorf("eventlog: cut partial frame off %s: %w", w.path, terr))
			}
		}
		return err
	}
	w.size += int64(m)
	return nil
}

// Sync commits the current segment to stable storage (fsync). It blocks
// Writes while the disk works; the gateway calls it at the end of a turn.
// After Close it returns an error wrapping fs.ErrClosed.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("eventlog: sync %s: %w", w.path, fs.ErrClosed)
	}
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("eventlog: sync %s: %w", w.path, err)
	}
	return nil
}

// Close syncs and closes the current segment and releases the session's
// lock. It does I/O; the error reports a failed sync or close, and the lock
// is released regardless. Closing again returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	if w.f != nil {
		if err := w.f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("eventlog: sync %s: %w", w.path, err))
		}
		if err := w.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("eventlog: close %s: %w", w.path, err))
		}
		w.f = nil
	}
	if err := w.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("eventlog: unlock %s: %w", w.path, err))
	}
	w.lock = nil
	return errors.Join(errs...)
}

// openCurrentLocked opens the current segment for appending, cuts off a
// torn last line, and records its size.
func (w *Writer) openCurrentLocked() error {
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("eventlog: open %s: %w", w.path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("eventlog: open %s: %w", w.path, err)
	}
	size := st.Size()
	if size > 0 {
		nl, err := lastNewline(f, size)
		if err != nil {
			f.Close()
			return fmt.Errorf("eventlog: open %s: %w", w.path, err)
		}
		if nl+1 < size {
			if err := f.Truncate(nl + 1); err != nil {
				f.Close()
				return fmt.Errorf("eventlog: cut torn line off %s: %w", w.path, err)
			}
			size = nl + 1
		}
	}
	if err := syncDir(w.path); err != nil {
		f.Close()
		return err
	}
	w.f, w.size = f, size
	return nil
}

// pruneLocked deletes older segments numbered MaxSegments or above.
func (w *Writer) pruneLocked() error {
	older, err := olderSegments(w.path)
	if err != nil {
		return err
	}
	for _, s := range older {
		if s.n < w.maxSegments {
			continue
		}
		if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("eventlog: delete old segment: %w", err)
		}
	}
	return nil
}

// rotateLocked retires the current segment and starts an empty one: the
// oldest kept segment is deleted, the others are renamed one number up,
// and the current one becomes number 1 (or is deleted when only one
// segment is kept). Renames and deletes leave open readers' files intact.
// If a rename fails, the current segment is reopened as it is, so the
// next Write tries again. w.f must be open.
func (w *Writer) rotateLocked() error {
	var errs []error
	if err := w.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("eventlog: sync %s: %w", w.path, err))
	}
	if err := w.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("eventlog: close %s: %w", w.path, err))
	}
	w.f = nil
	if len(errs) == 0 {
		errs = append(errs, w.shiftLocked())
	}
	if err := w.openCurrentLocked(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eventlog: rotate: %w", err)
	}
	return nil
}

// shiftLocked renames the segment files one number up, oldest first.
func (w *Writer) shiftLocked() error {
	last := w.maxSegments - 1 // the highest number kept
	if last == 0 {
		if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.Remove(olderPath(w.path, last)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for n := last - 1; n >= 1; n-- {
		if err := os.Rename(olderPath(w.path, n), olderPath(w.path, n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.Rename(w.path, olderPath(w.path, 1))
}

// syncDir commits the directory entries next to path (creations, renames).
func syncDir(path string) error {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("eventlog: sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("eventlog: sync dir %s: %w", dir, err)
	}
	return nil
}
