package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSegments(t *testing.T) {
	tests := []struct {
		name  string
		files []string // created in the directory
		path  string   // relative to it
		want  []string // relative to it; nil means an fs.ErrNotExist error
	}{
		{"current only", []string{"s.ndjson"}, "s.ndjson", []string{"s.ndjson"}},
		{"numeric order", []string{"s.ndjson", "s.1.ndjson", "s.2.ndjson", "s.10.ndjson", "s.9.ndjson"}, "s.ndjson",
			[]string{"s.10.ndjson", "s.9.ndjson", "s.2.ndjson", "s.1.ndjson", "s.ndjson"}},
		{"gap after a crash", []string{"s.ndjson", "s.1.ndjson", "s.3.ndjson"}, "s.ndjson", []string{"s.3.ndjson", "s.1.ndjson", "s.ndjson"}},
		{"current missing mid-rotation", []string{"s.1.ndjson"}, "s.ndjson", []string{"s.1.ndjson"}},
		{"ignores lookalikes", []string{"s.ndjson", "s.01.ndjson", "s.x.ndjson", "s.1.ndjson.tmp", "s.lock", "s%2E1.ndjson", "t.1.ndjson", "s.-1.ndjson"}, "s.ndjson", []string{"s.ndjson"}},
		{"other extension is one segment", []string{"stream.jsonl", "stream.1.jsonl"}, "stream.jsonl", []string{"stream.jsonl"}},
		{"nothing", []string{"t.ndjson"}, "s.ndjson", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Segments(filepath.Join(dir, tc.path))
			if tc.want == nil {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("got %v, %v; want fs.ErrNotExist", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Segments: %v", err)
			}
			for i := range got {
				got[i], _ = filepath.Rel(dir, got[i])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenReaderMissing(t *testing.T) {
	_, err := OpenReader(PathFor(t.TempDir(), "nobody"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
}

// TestReaderWhileWriting reads the log again and again while a writer
// appends and rotates: every read is a run of complete, consecutive frames.
func TestReaderWhileWriting(t *testing.T) {
	const frames = 3000
	dir := t.TempDir()
	w := mustOpen(t, dir, "s", Config{MaxSegmentBytes: 2 << 10, MaxSegments: 4})
	frame := func(n int) string { return fmt.Sprintf(`{"n":%d,"pad":"%s"}`, n, strings.Repeat("·", n%40)) }
	if err := w.Write([]byte(frame(0))); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{})
	var writeErr error
	wg.Go(func() {
		defer close(done)
		for n := 1; n < frames; n++ {
			if writeErr = w.Write([]byte(frame(n))); writeErr != nil {
				return
			}
		}
	})

	check := func(log string) (lines int) {
		t.Helper()
		if log != "" && !strings.HasSuffix(log, "\n") {
			t.Fatalf("read does not end in a newline: %q", log[max(len(log)-40, 0):])
		}
		prev := -1
		for line := range strings.Lines(log) {
			line = strings.TrimSuffix(line, "\n")
			var n int
			if _, err := fmt.Sscanf(line, `{"n":%d,`, &n); err != nil || line != frame(n) {
				t.Fatalf("read a broken line %q", line)
			}
			if prev >= 0 && n != prev+1 {
				t.Fatalf("frame %d follows frame %d", n, prev)
			}
			prev = n
			lines++
		}
		return lines
	}
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		check(readLog(t, w.Path()))
	}
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("Write: %v", writeErr)
	}
	log := readLog(t, w.Path())
	check(log)
	if !strings.HasSuffix(log, frame(frames-1)+"\n") {
		t.Errorf("final read does not end with the last frame")
	}
	t.Logf("%d reads during writing", reads)
}

// trimTorn drops the bytes after the last newline.
func trimTorn(b []byte) []byte { return b[:bytes.LastIndexByte(b, '\n')+1] }

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n"), []byte("{\"b\":2}\n{\"c\""), []byte("{\"d\":4}\n{\"e"))
	f.Add([]byte(""), []byte("\n\n"), []byte("no newline"))
	f.Add([]byte("torn in the oldest"), []byte("\u2028\n"), []byte("\xff\n\x00"))
	f.Fuzz(func(t *testing.T, oldest, older, current []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.ndjson")
		for name, b := range map[string][]byte{"s.2.ndjson": oldest, "s.1.ndjson": older, "s.ndjson": current} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		r, err := OpenReader(path)
		if err != nil {
			t.Fatalf("OpenReader: %v", err)
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(got) > 0 && got[len(got)-1] != '\n' {
			t.Fatalf("output ends in a partial line: %q", got)
		}
		want := bytes.Join([][]byte{trimTorn(oldest), trimTorn(older), trimTorn(current)}, nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
