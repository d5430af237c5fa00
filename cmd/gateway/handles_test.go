package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster/natsnode"
)

// Shared message handles: a turn cut off with a tool running leaves its
// tool's message showing it running; whoever takes the thread up next
// edits that same message to the cut-off line.

// waitMessage reads the thread's live events until a message ok accepts
// shows, and returns it (a minute at most).
func (a webAPI) waitMessage(t *testing.T, th, what string, ok func(webMessage) bool) webMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.base+"api/threads/"+th+"/events", nil)
	resp, err := a.do(http.DefaultClient, req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, found := strings.CutPrefix(line, "event: "); found {
			event = v
			continue
		}
		var m webMessage
		if v, found := strings.CutPrefix(line, "data: "); found && event == "message" && json.Unmarshal([]byte(v), &m) == nil && ok(m) {
			return m
		}
	}
	t.Fatalf("thread %s: no %s within a minute", th, what)
	return webMessage{}
}

func runningMake(m webMessage) bool {
	return m.Kind == "tool" && strings.Contains(m.Text, "make") && strings.HasSuffix(m.Text, "· running")
}

// checkCutOff waits for the tool message running before to be edited to
// its cut-off line, and checks that no other message shows the tool.
func checkCutOff(t *testing.T, api webAPI, th string, running webMessage) {
	t.Helper()
	got := api.waitMessage(t, th, "the cut-off tool line", func(m webMessage) bool {
		return m.ID == running.ID && strings.HasSuffix(m.Text, "· cancelled")
	})
	if want := strings.TrimSuffix(running.Text, "running") + "cancelled"; got.Text != want || got.Edits == 0 {
		t.Errorf("the tool's message after the cut-off = %q (%d edits), want %q edited in place", got.Text, got.Edits, want)
	}
	ms, err := api.messages(th)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Kind == "tool" && m.ID != running.ID {
			t.Errorf("another tool message: %+v (want the one edited in place)", m)
		}
	}
}

// runConfig writes a `gateway run` configuration: web chat, JSON logs
// with debug records, its own data directory.
func runConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`dataDir: %s
log:
  format: json
  level: debug
channels:
  web:
    listen: 127.0.0.1:0
metrics:
  listen: ""
`, filepath.Join(dir, "data"))
	f := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func webOf(t *testing.T, r *role) webAPI {
	t.Helper()
	line := r.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	return webAPIAt(line[strings.Index(line, "http"):])
}

// waitSaved waits until the web chat saved its state file with message
// id in it: a SIGKILL loses what it did not save yet.
func waitSaved(t *testing.T, r *role, stateFile, id string) {
	t.Helper()
	for seen := 0; ; seen++ {
		n := 0
		r.stderr.wait(t, "a save of the web chat", func(l string) bool {
			if strings.Contains(l, `"web chat: saved the threads"`) {
				n++
			}
			return n > seen
		})
		if b, err := os.ReadFile(stateFile); err == nil && strings.Contains(string(b), id) {
			return
		}
	}
}

func recorded(l string) bool {
	return strings.Contains(l, `"open messages recorded"`) && strings.Contains(l, `"open":1`)
}

// `gateway run` killed (SIGKILL) while a tool runs: the next start edits
// the tool's message to its cut-off line before it tells the thread the
// turn was cut off.
func TestRunCrashEditsTheCutOffToolLine(t *testing.T) {
	cfg := runConfig(t)
	g1 := startRole(t, "run1", cfg, "run")
	api := webOf(t, g1)
	out, err := api.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	th := out["id"].(string)
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "slow-tool 3600"}); err != nil {
		t.Fatal(err)
	}
	running := api.waitMessage(t, th, "the running tool's line", runningMake)
	g1.stderr.wait(t, "the tool's message recorded", recorded)
	waitSaved(t, g1, filepath.Join(filepath.Dir(cfg), "data", "web-chat.json"), running.ID)
	g1.stop(syscall.SIGKILL)

	g2 := startRole(t, "run2", cfg, "run")
	api = webOf(t, g2)
	checkCutOff(t, api, th, running)
	g2.stop(syscall.SIGTERM)
}

// A worker killed (SIGKILL) while a tool runs: the worker that takes the
// thread over edits the tool's message (through the edge) to its cut-off
// line.
func TestClusterTakeoverEditsTheCutOffToolLine(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()
	edge := startRole(t, "edge", clusterConfig(t, url, "edge"), "edge", "--id", "e1")
	api := webOf(t, edge)
	w1 := startRole(t, "w1", clusterConfig(t, url, "w1"), "worker", "--id", "w1", "--set", "log.level=debug")
	w1.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })

	out, err := api.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	th := out["id"].(string)
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "slow-tool 3600"}); err != nil {
		t.Fatal(err)
	}
	running := api.waitMessage(t, th, "the running tool's line", runningMake)
	w1.stderr.wait(t, "the tool's message recorded", recorded)
	w1.stop(syscall.SIGKILL)

	// The prompt asked again runs for an hour: w2 need not wait for it
	// when the test stops it.
	w2 := startRole(t, "w2", clusterConfig(t, url, "w2"), "worker", "--id", "w2", "--set", "cluster.drainTimeout=0s")
	w2.stdout.wait(t, "w2 running", func(l string) bool { return strings.Contains(l, "running") })
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo after"}); err != nil {
		t.Fatal(err)
	}
	// w2 edits the old line, then asks the cut-off prompt again (its tool
	// runs anew, in a message of its own) before it answers "echo after".
	got := api.waitMessage(t, th, "the cut-off tool line", func(m webMessage) bool {
		return m.ID == running.ID && strings.HasSuffix(m.Text, "· cancelled")
	})
	if want := strings.TrimSuffix(running.Text, "running") + "cancelled"; got.Text != want || got.Edits == 0 {
		t.Errorf("the tool's message after the cut-off = %q (%d edits), want %q edited in place", got.Text, got.Edits, want)
	}
	again := api.waitMessage(t, th, "the tool of the prompt asked again", func(m webMessage) bool { return runningMake(m) && m.ID != running.ID })
	ms, err := api.messages(th)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Kind == "tool" && m.ID != running.ID && m.ID != again.ID {
			t.Errorf("another tool message: %+v (want the old one edited in place and the new turn's)", m)
		}
	}
	w2.stop(syscall.SIGTERM)
	edge.stop(syscall.SIGTERM)
}
