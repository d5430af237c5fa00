package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Segments lists the segment files of the log whose current segment is path
// (a path from PathFor), oldest first: N.K.ndjson … N.1.ndjson, then
// N.ndjson itself. Files missing from the sequence are skipped, so the list
// is still right after a crash in the middle of a rotation. A path that does
// not end in ".ndjson" is a single segment. It reads the directory; the
// error wraps fs.ErrNotExist when no segment exists.
func Segments(path string) ([]string, error) {
	older, err := olderSegments(path)
	if err != nil {
		return nil, err
	}
	var segs []string
	for _, s := range slices.Backward(older) {
		segs = append(segs, s.path)
	}
	switch _, err := os.Stat(path); {
	case err == nil:
		segs = append(segs, path)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("eventlog: segments of %s: %w", path, err)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("eventlog: segments of %s: %w", path, fs.ErrNotExist)
	}
	return segs, nil
}

// segment is an older segment file and its number.
type segment struct {
	n    int
	path string
}

// olderSegments lists the numbered segments next to the current segment
// path, newest (lowest number) first. It reads the directory.
func olderSegments(path string) ([]segment, error) {
	stem, ok := strings.CutSuffix(filepath.Base(path), segmentExt)
	if !ok || stem == "" {
		return nil, nil
	}
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("eventlog: list %s: %w", dir, err)
	}
	var segs []segment
	for _, e := range entries {
		if n, ok := segmentNumber(e.Name(), stem); ok && e.Type().IsRegular() {
			segs = append(segs, segment{n: n, path: filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(segs, func(a, b segment) int { return a.n - b.n })
	return segs, nil
}

// segmentNumber parses name as stem.<n>.ndjson with n ≥ 1 written without
// leading zeros.
func segmentNumber(name, stem string) (int, bool) {
	rest, ok := strings.CutPrefix(name, stem+".")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, segmentExt)
	if !ok || digits == "" || len(digits) > 9 || digits[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// olderPath returns the path of the older segment numbered n.
func olderPath(current string, n int) string {
	return strings.TrimSuffix(current, segmentExt) + "." + strconv.Itoa(n) + segmentExt
}

// lastNewline returns the offset of the last '\n' in the first size bytes
// of r, or -1 if there is none. It reads backwards from size, as much as the
// torn tail is long.
func lastNewline(r io.ReaderAt, size int64) (int64, error) {
	var buf [32 << 10]byte
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := r.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}
