package eventlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

// openAttempts bounds how often OpenReader retries when a rotation moves
// the files while it opens them.
const openAttempts = 10

// OpenReader opens the log whose current segment is path (a path from
// PathFor) and returns its frames as one stream of complete lines: the
// older segments oldest first, then the current one (see Segments). Bytes
// after a segment's last newline are a torn frame and are left out.
//
// It works while a Writer appends: it reads the files as they were when it
// opened them, up to their sizes then. It does I/O; the error wraps
// fs.ErrNotExist when the log has no segment. The caller closes the result.
func OpenReader(path string) (io.ReadCloser, error) {
	for range openAttempts {
		r, stable, err := openSnapshot(path)
		if err != nil || stable {
			return r, err
		}
	}
	return nil, fmt.Errorf("eventlog: read %s: segments kept moving while opening", path)
}

// openSnapshot opens every segment of path's log. stable is false (and no
// file is left open) when a rotation renamed the files in between.
func openSnapshot(path string) (r io.ReadCloser, stable bool, err error) {
	segs, err := Segments(path)
	if err != nil {
		return nil, false, fmt.Errorf("eventlog: read %s: %w", path, err)
	}
	sr := &segmentReader{}
	defer func() {
		if r == nil {
			sr.Close()
		}
	}()
	var parts []io.Reader
	for _, seg := range segs {
		f, err := os.Open(seg)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil // renamed away; try again
		}
		if err != nil {
			return nil, false, fmt.Errorf("eventlog: read %s: %w", path, err)
		}
		sr.files = append(sr.files, f)
		st, err := f.Stat()
		if err != nil {
			return nil, false, fmt.Errorf("eventlog: read %s: %w", seg, err)
		}
		nl, err := lastNewline(f, st.Size())
		if err != nil {
			return nil, false, fmt.Errorf("eventlog: read %s: %w", seg, err)
		}
		parts = append(parts, io.NewSectionReader(f, 0, nl+1))
	}
	// The snapshot is consistent if the names still lead to the files
	// opened; otherwise a rotation ran in between.
	again, err := Segments(path)
	if err != nil || !slices.Equal(segs, again) {
		return nil, false, nil
	}
	for i, seg := range segs {
		st, err := os.Stat(seg)
		if err != nil {
			return nil, false, nil
		}
		fst, err := sr.files[i].Stat()
		if err != nil {
			return nil, false, fmt.Errorf("eventlog: read %s: %w", seg, err)
		}
		if !os.SameFile(st, fst) {
			return nil, false, nil
		}
	}
	sr.r = io.MultiReader(parts...)
	return sr, true, nil
}

// segmentReader reads open segment files in sequence.
type segmentReader struct {
	files []*os.File
	r     io.Reader
}

// Read reads the next bytes of the stream; it returns io.EOF at its end.
func (s *segmentReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// Close closes the segment files.
func (s *segmentReader) Close() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	s.files = nil
	return errors.Join(errs...)
}
