package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oddFrame is frame n of writer g: a JSON-RPC-like line with bytes a naive
// line handler would mangle. Every 150th frame of writer 0 is over 1 MiB.
func oddFrame(g, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"g":%d,"n":%d,"jsonrpc":"2.0","method":"session/update","params":{"text":"`, g, n)
	b.WriteString("héllo 世界 🚀 \u2028 \u2029 \r \t \x00 \xff\xfe \\n ")
	if g == 0 && n%150 == 0 {
		b.Write(bytes.Repeat([]byte("x\u2028"), (1<<20)/4+n))
	}
	b.WriteString(`"}}`)
	return b.Bytes()
}

// readLog returns everything OpenReader yields for path.
func readLog(t *testing.T, path string) string {
	t.Helper()
	r, err := OpenReader(path)
	if err != nil {
		t.Fatalf("OpenReader: %v", err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read log: %v", err)
	}
	return string(b)
}

// mustOpen opens a writer and closes it when the test ends.
func mustOpen(t testing.TB, dir, id string, c Config) *Writer {
	t.Helper()
	w, err := Open(dir, id, c)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestWriteConcurrentOrder(t *testing.T) {
	const writers, frames = 6, 300
	tests := []struct {
		name string
		c    Config
	}{
		{"one segment", DefaultConfig()},
		{"rotating", Config{MaxSegmentBytes: 256 << 10, MaxSegments: 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustOpen(t, t.TempDir(), "sess-1", tc.c)
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for g := range writers {
				wg.Go(func() {
					for n := range frames {
						if err := w.Write(oddFrame(g, n)); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("Write: %v", err)
			}
			if err := w.Sync(); err != nil {
				t.Fatalf("Sync: %v", err)
			}

			log := readLog(t, w.Path())
			if !strings.HasSuffix(log, "\n") {
				t.Fatalf("log does not end in a newline")
			}
			next := make([]int, writers) // next frame number expected per writer
			for i, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
				var g, n int
				if _, err := fmt.Sscanf(line, `{"g":%d,"n":%d,`, &g, &n); err != nil || g < 0 || g >= writers {
					t.Fatalf("line %d: unparsable %.60q", i, line)
				}
				if n != next[g] {
					t.Fatalf("line %d: writer %d frame %d, want frame %d", i, g, n, next[g])
				}
				if want := oddFrame(g, n); line != string(want) {
					t.Fatalf("line %d (writer %d frame %d) differs from the frame written: got %d bytes, want %d", i, g, n, len(line), len(want))
				}
				next[g]++
			}
			for g, n := range next {
				if n != frames {
					t.Errorf("writer %d: got %d frames, want %d", g, n, frames)
				}
			}
		})
	}
}

// segmentFiles returns the base names and contents of path's segments.
func segmentFiles(t *testing.T, path string) (names, contents []string) {
	t.Helper()
	segs, err := Segments(path)
	if err != nil {
		t.Fatalf("Segments: %v", err)
	}
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(s))
		contents = append(contents, string(b))
	}
	return names, contents
}

// wantNames is the names of k segments of session s, oldest first.
func wantNames(s string, k int) []string {
	var names []string
	for n := k - 1; n >= 1; n-- {
		names = append(names, fmt.Sprintf("%s.%d.ndjson", s, n))
	}
	return append(names, s+".ndjson")
}

func TestRotation(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes int64
		keep     int
		frames   []string
		want     []string // segment contents, oldest first
	}{
		{"fits exactly", 10, 5, []string{"abcd", "efgh"}, []string{"abcd\nefgh\n"}},
		{"one byte over", 10, 5, []string{"abcd", "efgh", "i"}, []string{"abcd\nefgh\n", "i\n"}},
		{"big frame alone", 10, 5, []string{"ab", "0123456789abc", "cd"}, []string{"ab\n", "0123456789abc\n", "cd\n"}},
		{"big first frame", 5, 5, []string{"0123456789", "x"}, []string{"0123456789\n", "x\n"}},
		{"oldest deleted", 4, 3, []string{"aa1", "aa2", "aa3", "aa4", "aa5", "aa6"}, []string{"aa4\n", "aa5\n", "aa6\n"}},
		{"single segment", 4, 1, []string{"aa1", "aa2", "aa3"}, []string{"aa3\n"}},
		{"empty frames", 2, 5, []string{"", "", ""}, []string{"\n\n", "\n"}},
		{"several per segment", 8, 2, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, []string{"e\nf\ng\nh\n", "i\nj\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := mustOpen(t, dir, "s", Config{MaxSegmentBytes: tc.maxBytes, MaxSegments: tc.keep})
			for _, f := range tc.frames {
				if err := w.Write([]byte(f)); err != nil {
					t.Fatalf("Write(%q): %v", f, err)
				}
			}
			names, contents := segmentFiles(t, w.Path())
			if diff := cmp.Diff(wantNames("s", len(tc.want)), names); diff != "" {
				t.Errorf("segment names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, contents); diff != "" {
				t.Errorf("segment contents (-want +got):\n%s", diff)
			}
			if got, want := readLog(t, w.Path()), strings.Join(tc.want, ""); got != want {
				t.Errorf("reader got %q, want %q", got, want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(entries), len(tc.want)+1; got != want {
				t.Errorf("directory holds %d files, want %d (segments and the lock)", got, want)
			}
		})
	}
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	c := Config{MaxSegmentBytes: 8, MaxSegments: 5}
	w := mustOpen(t, dir, "s", c)
	for _, f := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		if err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, contents := segmentFiles(t, w.Path())
	if diff := cmp.Diff([]string{"a\nb\nc\nd\n", "e\nf\ng\nh\n", "i\n"}, contents); diff != "" {
		t.Fatalf("before reopening (-want +got):\n%s", diff)
	}

	t.Run("appends and counts the existing size", func(t *testing.T) {
		w := mustOpen(t, dir, "s", c)
		for _, f := range []string{"j", "k", "l", "m"} {
			if err := w.Write([]byte(f)); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		_, contents := segmentFiles(t, w.Path())
		if diff := cmp.Diff([]string{"a\nb\nc\nd\n", "e\nf\ng\nh\n", "i\nj\nk\nl\n", "m\n"}, contents); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("fewer segments prunes the oldest", func(t *testing.T) {
		w := mustOpen(t, dir, "s", Config{MaxSegmentBytes: 8, MaxSegments: 2})
		names, contents := segmentFiles(t, w.Path())
		if diff := cmp.Diff(wantNames("s", 2), names); diff != "" {
			t.Errorf("names (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"i\nj\nk\nl\n", "m\n"}, contents); diff != "" {
			t.Errorf("contents (-want +got):\n%s", diff)
		}
	})
}

func TestSessionsDoNotShareFiles(t *testing.T) {
	dir := t.TempDir()
	c := Config{MaxSegmentBytes: 2, MaxSegments: 5}
	a := mustOpen(t, dir, "a", c)
	a1 := mustOpen(t, dir, "a.1", c) // must not look like a's segment 1
	for _, f := range []string{"1", "2", "3"} {
		if err := a.Write([]byte("a" + f)); err != nil {
			t.Fatal(err)
		}
		if err := a1.Write([]byte("b" + f)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readLog(t, a.Path()), "a1\na2\na3\n"; got != want {
		t.Errorf("session a: got %q, want %q", got, want)
	}
	if got, want := readLog(t, a1.Path()), "b1\nb2\nb3\n"; got != want {
		t.Errorf("session a.1: got %q, want %q", got, want)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, "s", DefaultConfig())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := Open(dir, "s", DefaultConfig()); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: got %v, want ErrLocked", err)
	}
	other := mustOpen(t, dir, "other", DefaultConfig())
	if err := other.Write([]byte("x")); err != nil {
		t.Fatalf("another session: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	w2, err := Open(dir, "s", DefaultConfig())
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	w2.Close()
}

// lockHelperEnv names the directory TestLockHelperProcess tries to open.
const lockHelperEnv = "EVENTLOG_LOCK_HELPER_DIR"

// TestLockHelperProcess is the other process of TestLockOtherProcess.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	w, err := Open(dir, "s", DefaultConfig())
	switch {
	case errors.Is(err, ErrLocked):
		fmt.Println("helper: locked")
	case err != nil:
		fmt.Println("helper: error:", err)
	default:
		fmt.Println("helper: opened")
		w.Close()
	}
}

func TestLockOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	helper := func() string {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestLockHelperProcess$")
		cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		for line := range strings.Lines(string(out)) {
			if r, ok := strings.CutPrefix(line, "helper: "); ok {
				return strings.TrimSpace(r)
			}
		}
		t.Fatalf("helper said nothing:\n%s", out)
		return ""
	}
	w, err := Open(dir, "s", DefaultConfig())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got, want := helper(), "locked"; got != want {
		t.Errorf("while held: helper got %q, want %q", got, want)
	}
	w.Close()
	if got, want := helper(), "opened"; got != want {
		t.Errorf("after Close: helper got %q, want %q", got, want)
	}
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	c := Config{MaxSegmentBytes: 1 << 20, MaxSegments: 3}
	w := mustOpen(t, dir, "s", c)
	for _, f := range []string{`{"id":1}`, `{"id":2}`} {
		if err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// The gateway died in the middle of a write.
	f, err := os.OpenFile(w.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":3,"res`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if got, want := readLog(t, w.Path()), "{\"id\":1}\n{\"id\":2}\n"; got != want {
		t.Errorf("reader: got %q, want %q", got, want)
	}
	w = mustOpen(t, dir, "s", c)
	if err := w.Write([]byte(`{"id":4}`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "{\"id\":1}\n{\"id\":2}\n{\"id\":4}\n"; got != want {
		t.Errorf("after reopening: file holds %q, want %q", got, want)
	}
}

func TestWriteErrors(t *testing.T) {
	w := mustOpen(t, t.TempDir(), "s", DefaultConfig())
	if err := w.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte("two\nlines")); !errors.Is(err, ErrNewline) {
		t.Errorf("frame with a newline: got %v, want ErrNewline", err)
	}
	if err := w.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write([]byte("late")); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Write after Close: got %v, want fs.ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Sync after Close: got %v, want fs.ErrClosed", err)
	}
	b, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "ok\n"; got != want {
		t.Errorf("file holds %q, want %q", got, want)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		id   string
		c    Config
	}{
		{"empty session id", dir, "", DefaultConfig()},
		{"negative size", dir, "s", Config{MaxSegmentBytes: -1, MaxSegments: 1}},
		{"negative count", dir, "s", Config{MaxSegmentBytes: 1, MaxSegments: -1}},
		{"dir is a file", file, "s", DefaultConfig()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Open(tc.dir, tc.id, tc.c)
			if err == nil {
				w.Close()
				t.Fatalf("Open succeeded, want an error")
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	w := mustOpen(b, b.TempDir(), "bench", DefaultConfig())
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"0b6f1c4e","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` +
		strings.Repeat("lorem ipsum ", 13) + `"}}}}`)
	frame = frame[:300]
	b.SetBytes(int64(len(frame)) + 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
}
