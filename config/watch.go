package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch timing.
const (
	// WatchDebounce is how long Watch waits after the last change to the
	// file before it reloads (editors write in bursts).
	WatchDebounce = 200 * time.Millisecond
	// WatchMaxDelay bounds the wait while changes keep coming.
	WatchMaxDelay = 2 * time.Second
)

// Watch reloads the configuration when its file changes, until ctx is
// done; then it returns nil. The file is o.Path, or DefaultFile in the
// working directory; with neither, Watch returns an error wrapping
// ErrNoFile at once.
//
// Watch watches the file's directory, so editors that replace the file
// (write a new one, rename it over the old) and symlink swaps are seen.
// A burst of changes causes one reload, WatchDebounce after the last; a
// write that leaves the contents as they were causes none. A
// configuration that loads and validates goes to onChange; otherwise the
// error (every problem, as from Load) goes to onError and the caller keeps
// its old settings; so does an empty file (no YAML document), which Load
// would take as all defaults. Errors of the watcher itself and a file that has
// disappeared also go to onError. The callbacks run on Watch's goroutine,
// one at a time.
//
// Watch compares against the file as it is when Watch starts: call it
// right after Load.
func Watch(ctx context.Context, o LoadOptions, onChange func(Config), onError func(error)) error {
	return watch(ctx, o, onChange, onError, nil)
}

// WatchReady is Watch that calls ready, if not nil, once the file is
// watched: a change written after that is seen.
func WatchReady(ctx context.Context, o LoadOptions, onChange func(Config), onError func(error), ready func()) error {
	return watch(ctx, o, onChange, onError, ready)
}

// watch is Watch; ready, if not nil, is called once the directory is
// watched.
func watch(ctx context.Context, o LoadOptions, onChange func(Config), onError func(error), ready func()) error {
	path, err := o.file()
	if err != nil {
		return fmt.Errorf("watch config: %w", err)
	}
	if path == "" {
		return fmt.Errorf("watch config: %w", ErrNoFile)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("watch config: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch config: %w", err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(abs)); err != nil {
		return fmt.Errorf("watch config %s: %w", path, err)
	}
	// A symlinked file (a Kubernetes ConfigMap) changes when a link in
	// the directory is swapped: then any event in it is a possible change.
	fi, err := os.Lstat(abs)
	link := err == nil && fi.Mode()&fs.ModeSymlink != 0
	relevant := func(e fsnotify.Event) bool {
		return link || filepath.Clean(e.Name) == abs
	}

	last, err := os.ReadFile(abs)
	missing := err != nil
	reload := func() {
		data, err := os.ReadFile(abs)
		if err != nil {
			if !missing {
				onError(fmt.Errorf("reload config: %w", err))
			}
			missing, last = true, nil
			return
		}
		if !missing && bytes.Equal(data, last) {
			return
		}
		missing, last = false, data
		if emptyYAML(data) {
			// Half-written, or emptied by mistake: not a wish for the
			// defaults.
			onError(fmt.Errorf("reload config %s: the file is empty", path))
			return
		}
		cfg, err := o.load(path, data)
		if err != nil {
			onError(fmt.Errorf("reload config %s: %w", path, err))
			return
		}
		onChange(cfg)
	}
	if ready != nil {
		ready()
	}
	return debounce(ctx, w.Events, w.Errors, relevant, reload, onError)
}

// debounce calls reload once after each burst of relevant events: when
// WatchDebounce has passed since the last one, or WatchMaxDelay since the
// first. Watcher errors go to onError and also cause a reload (events may
// have been lost). It returns nil when ctx is done, or an error when the
// watcher's channels close.
func debounce(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error, relevant func(fsnotify.Event) bool, reload func(), onError func(error)) error {
	var (
		timer *time.Timer
		fire  <-chan time.Time
		first time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	schedule := func() {
		now := time.Now()
		if fire == nil {
			first = now
		}
		d := min(WatchDebounce, WatchMaxDelay-now.Sub(first))
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		fire = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-events:
			if !ok {
				return errors.New("watch config: watcher closed")
			}
			if relevant(e) {
				schedule()
			}
		case err, ok := <-errs:
			if !ok {
				return errors.New("watch config: watcher closed")
			}
			onError(fmt.Errorf("watch config: %w", err))
			schedule()
		case <-fire:
			fire = nil
			reload()
		}
	}
}
