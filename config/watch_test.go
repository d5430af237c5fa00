package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"
)

// waitFor returns the next value from ch. fsnotify works in real time, so
// this is a bounded wait on a channel, not a sleep.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// watcher runs watch on path until the test ends.
type watcher struct {
	changes chan Config
	errs    chan error
}

func startWatch(t *testing.T, path string) *watcher {
	t.Helper()
	w := &watcher{changes: make(chan Config, 16), errs: make(chan error, 16)}
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- watch(ctx, LoadOptions{Platforms: testPlatforms, Path: path, Environ: testEnv},
			func(c Config) { w.changes <- c },
			func(err error) { w.errs <- err },
			func() { close(ready) })
	}()
	t.Cleanup(func() {
		cancel()
		if err := waitFor(t, done, "Watch to return"); err != nil {
			t.Errorf("Watch returned %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Watch: %v", err)
	}
	return w
}

// write replaces path's contents at once (a new file renamed over it), so
// the watcher never reads it half-written: os.WriteFile truncates first,
// and on a loaded machine the watcher can read the empty file in between
// and report it (TestWatch failed so in a CI run under load).
func write(t *testing.T, path, s string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".write-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gateway.yaml")
	write(t, path, "busy: queue\n")
	w := startWatch(t, path)

	// A valid change is delivered.
	write(t, path, "busy: interrupt\n")
	if c := waitFor(t, w.changes, "a change"); c.Busy != "interrupt" {
		t.Errorf("busy = %q, want interrupt", c.Busy)
	}

	// An invalid change is reported with every problem; nothing is
	// delivered.
	write(t, path, "busy: later\ntyping: {mode: sometimes}\n")
	err := waitFor(t, w.errs, "an error")
	for _, want := range []string{`busy: must be one of queue interrupt, got "later"`, `typing.mode: must be one of`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	select {
	case c := <-w.changes:
		t.Errorf("an invalid file was delivered: busy = %q", c.Busy)
	default:
	}

	// An editor that writes a new file and renames it over the old one.
	tmp := filepath.Join(dir, ".gateway.yaml.swp")
	write(t, tmp, "typing: {mode: never}\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if c := waitFor(t, w.changes, "the renamed file"); c.Typing.Mode != "never" {
		t.Errorf("typing.mode = %q, want never", c.Typing.Mode)
	}

	// Writing the same contents again changes nothing: the next
	// delivery is the next real change.
	write(t, path, "typing: {mode: never}\n")
	write(t, filepath.Join(dir, "other.yaml"), "not: watched\n")
	write(t, path, "typing: {mode: message}\n")
	if c := waitFor(t, w.changes, "a change after a rewrite"); c.Typing.Mode != "message" {
		t.Errorf("typing.mode = %q, want message (the same contents were delivered again?)", c.Typing.Mode)
	}

	// Removed, then back.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, w.errs, "the removal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want a not-exist error", err)
	}
	// Written in place, as most editors do (the last step, since a
	// loaded machine may read it half-written and report that first).
	if err := os.WriteFile(path, []byte("typing: {mode: message}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := waitFor(t, w.changes, "the file back"); c.Typing.Mode != "message" {
		t.Errorf("typing.mode = %q, want message", c.Typing.Mode)
	}
}

// TestWatchRejectsAnEmptyFile: a file emptied (or left with comments
// only) is an error like any invalid one, not a reset to the defaults.
func TestWatchRejectsAnEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	write(t, path, "busy: interrupt\n")
	w := startWatch(t, path)
	for _, empty := range []string{"", "# all commented out\n\n"} {
		write(t, path, empty)
		err := waitFor(t, w.errs, "an error for "+strconv.Quote(empty))
		if !strings.Contains(err.Error(), "the file is empty") {
			t.Errorf("err = %v, want the file is empty", err)
		}
		select {
		case c := <-w.changes:
			t.Errorf("an empty file was delivered: busy = %q", c.Busy)
		default:
		}
	}
	write(t, path, "busy: queue\n")
	if c := waitFor(t, w.changes, "the file filled again"); c.Busy != "queue" {
		t.Errorf("busy = %q, want queue", c.Busy)
	}
}

func TestWatchNoFile(t *testing.T) {
	t.Chdir(t.TempDir())
	err := Watch(t.Context(), LoadOptions{Platforms: testPlatforms, Environ: testEnv}, func(Config) {}, func(error) {})
	if !errors.Is(err, ErrNoFile) {
		t.Errorf("err = %v, want ErrNoFile", err)
	}
}

// TestDebounce checks the timing of reloads with fake time.
func TestDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		events := make(chan fsnotify.Event)
		errs := make(chan error)
		reloads := make(chan time.Duration, 16)
		reported := make(chan error, 16)
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		relevant := func(e fsnotify.Event) bool { return e.Name != "other" }
		go func() {
			done <- debounce(ctx, events, errs, relevant,
				func() { reloads <- time.Since(start) },
				func(err error) { reported <- err })
		}()
		// A burst: three events 50ms apart, one reload 200ms after
		// the last.
		for range 3 {
			events <- fsnotify.Event{Name: "f"}
			time.Sleep(50 * time.Millisecond)
		}
		// An irrelevant event changes nothing.
		events <- fsnotify.Event{Name: "other"}
		time.Sleep(time.Second) // now 1.15s
		// Events every 90ms for 2.7s (from 1.15s to 3.76s): a reload
		// 2s after the first (3.15s), then one 200ms after the last
		// (3.96s).
		for range 30 {
			events <- fsnotify.Event{Name: "f"}
			time.Sleep(90 * time.Millisecond)
		}
		time.Sleep(time.Second) // now 4.85s
		// A watcher error is reported and causes a reload.
		errs <- errors.New("overflow")
		time.Sleep(time.Second)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("debounce returned %v", err)
		}
		close(reloads)
		var got []time.Duration
		for d := range reloads {
			got = append(got, d)
		}
		want := []time.Duration{300 * time.Millisecond, 3150 * time.Millisecond, 3960 * time.Millisecond, 5050 * time.Millisecond}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reload times (-want +got):\n%s", diff)
		}
		if err := <-reported; err == nil || !strings.Contains(err.Error(), "overflow") {
			t.Errorf("reported %v, want the watcher error", err)
		}
	})
}
