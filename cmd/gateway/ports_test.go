package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
)

// occupy makes sure addr is in use for the rest of the test: it listens on
// it, or finds that something else already does.
func occupy(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return // busy already, which is what the test wants
	}
	if err != nil {
		t.Fatalf("occupy %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
}

// lockedBuffer is a bytes buffer for a log written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// errorLines returns the log's lines at level ERROR.
func errorLines(log string) []string {
	var out []string
	for l := range strings.Lines(log) {
		if strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	return out
}

// In the default run, busy default ports move to free ones, the printed
// URLs show them, and both answer.
func TestBusyDefaultPortsMove(t *testing.T) {
	occupy(t, web.DefaultListen)
	occupy(t, config.DefaultMetricsListen)
	t.Chdir(t.TempDir()) // no gateway.yaml: the default run
	ctx, cancel := context.WithCancel(t.Context())
	outR, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--set", "dataDir=" + filepath.Join(t.TempDir(), "data")}, strings.NewReader(""), outW, &stderr)
		outW.Close()
	}()
	urls := map[string]string{}
	sc := bufio.NewScanner(outR)
	for len(urls) < 2 && sc.Scan() {
		line := sc.Text()
		for _, what := range []string{"web chat", "metrics"} {
			if rest, ok := strings.CutPrefix(line, "gateway: "+what+" at "); ok {
				urls[what] = rest
			}
		}
	}
	go io.Copy(io.Discard, outR)
	if len(urls) < 2 {
		cancel()
		t.Fatalf("the gateway printed %v and stopped: %v\n%s", urls, <-done, stderr.String())
	}
	for what, busy := range map[string]string{"web chat": web.DefaultListen, "metrics": config.DefaultMetricsListen} {
		if strings.Contains(urls[what], "//"+busy+"/") {
			t.Errorf("%s URL %s is on the busy default port", what, urls[what])
		}
		resp, err := http.Get(urls[what])
		if err != nil {
			t.Errorf("GET %s: %v", urls[what], err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", urls[what], resp.Status)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run = %v, want nil after the interrupt", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not stop within 30 s")
	}
	log := stderr.String()
	for _, key := range []string{"channels.web.listen", "metrics.listen"} {
		if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "key="+key) {
			t.Errorf("no warning names %s:\n%s", key, log)
		}
	}
	if e := errorLines(log); len(e) > 0 {
		t.Errorf("error lines in the log:\n%s", strings.Join(e, ""))
	}
}

// An address the operator set that is busy fails the start at once,
// naming the key, with nothing logged as an error on the way out.
func TestBusyConfiguredPortFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	for _, tc := range []struct {
		name string
		yaml string // a configuration file, if any
		args []string
		want string
	}{
		{
			name: "web chat in the file",
			yaml: "channels:\n  web:\n    listen: " + busy + "\n",
			want: "channels.web.listen: cannot listen on " + busy + " (set in gateway.yaml): bind: address already in use; set channels.web.listen to a free host:port",
		},
		{
			name: "metrics by --set",
			args: []string{"--set", "metrics.listen=" + busy, "--set", "channels.web.listen=127.0.0.1:0"},
			want: "metrics.listen: cannot listen on " + busy + " (set by --set): bind: address already in use; set metrics.listen to a free host:port",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			if tc.yaml != "" {
				if err := os.WriteFile("gateway.yaml", []byte(tc.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"run", "--set", "dataDir=" + filepath.Join(t.TempDir(), "data")}, tc.args...)
			var stdout, stderr lockedBuffer
			err := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("run = %v\nwant %s", err, tc.want)
			}
			if e := errorLines(stderr.String()); len(e) > 0 {
				t.Errorf("error lines in the log of a start that failed:\n%s", strings.Join(e, ""))
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}
