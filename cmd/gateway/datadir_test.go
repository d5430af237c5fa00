package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// logBuffer collects log lines; it is safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The data directory holds every transcript: one that other users can
// enter (0755, as systemd's StateDirectory makes it by default) is made
// 0700 at start, with a log line, and the database files are 0600 under
// the usual umask.
func TestDataDirIsMadePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	cfg, f := testConfig(t, "")
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	ctx, cancel := context.WithCancel(context.Background())
	g, err := start(ctx, cfg, f, slog.New(slog.NewTextHandler(&logs, nil)), hooks{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cancel()
	if err := g.wait(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o700 {
		t.Errorf("dataDir mode %04o, want 0700", got)
	}
	if !strings.Contains(logs.String(), "made it private (0700)") {
		t.Errorf("no log line says the directory was made private; log:\n%s", logs.String())
	}
	for _, name := range []string{"gateway.db", "gateway.lock"} {
		st, err := os.Stat(filepath.Join(cfg.DataDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode %04o, want 0600", name, got)
		}
	}
}
