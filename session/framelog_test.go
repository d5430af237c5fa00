package session_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/session"
	"github.com/nats-io/nats.go/jetstream"
)

// tee writes every frame to the cluster's event log and to a file log.
type tee struct{ a, b session.FrameLog }

func (t tee) Write(f []byte) error { return errors.Join(t.a.Write(f), t.b.Write(f)) }
func (t tee) Sync() error          { return errors.Join(t.a.Sync(), t.b.Sync()) }
func (t tee) Close() error         { return errors.Join(t.a.Close(), t.b.Close()) }

// With Options.OpenFrameLog, a session's frames go to the cluster's event
// log stream: every frame the file log gets, in the same order, across
// turns, the MCP token redacted.
func TestFrameLogOnCluster(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := jsstore.OpenEventLog(t.Context(), js, jsstore.EventLogOptions{Cluster: "gw", MaxAge: time.Hour, MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	fileDir := t.TempDir()
	var mu sync.Mutex
	var opened []string
	e := newEnv(t, envOptions{frameLog: func(id string) (session.FrameLog, error) {
		f, err := eventlog.Open(fileDir, id, eventlog.Config{})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		opened = append(opened, id)
		mu.Unlock()
		return tee{l.Writer(id), f}, nil
	}, rec: channeltest.Options{Edit: true}, mcp: true})
	th := e.rec.Thread("t1")
	e.say(th, ann, "echo Hello from the cluster.")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn 1 end = %+v", end)
	}
	e.say(th, ann, "echo Again.")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn 2 end = %+v", end)
	}
	e.close() // the agent stops; its log is closed (flushed)
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 1 {
		t.Fatalf("frame logs opened for %q, want one session", opened)
	}
	if files, _ := filepath.Glob(filepath.Join(e.dir, "events", "*.ndjson")); len(files) != 0 {
		t.Errorf("a file log was written beside OpenFrameLog's: %q", files)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := l.Reader(ctx, opened[0])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	// The NATS client and node go before the harness looks for goroutines
	// left running.
	nc.Close()
	n.Shutdown()
	want, err := os.ReadFile(eventlog.PathFor(fileDir, opened[0]))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the stream holds %d bytes, the file %d; they differ", len(got), len(want))
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if !strings.Contains(lines[0], `"method":"initialize"`) || strings.Count(string(got), `"stopReason":"end_turn"`) != 2 {
		t.Fatalf("the stream's frames are not the session's two turns from initialize:\n%s", got)
	}
	// The MCP server's token is redacted on the stream as in the file.
	if !strings.Contains(string(got), `{"name":"`+mcpgate.EnvToken+`","value":"`+agent.Redacted+`"}`) {
		t.Errorf("the stream lacks the redacted MCP token:\n%s", got)
	}
}
