package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/sysmsg"
)

// A prompt running on a worker that is killed is answered by another
// worker, whole, after the notice that its turn was cut off, though
// nothing more is sent to the thread: the live worker finds the thread
// (a prompt marked running, no lease) and takes it over.
func TestOrphanedPromptTakenOver(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()

	edge := startRole(t, "edge", clusterConfig(t, url, "edge"), "edge", "--id", "e1")
	line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	api := webAPI{base: line[strings.Index(line, "http"):]}
	// w1 alone, so that the thread is w1's.
	w1 := startRole(t, "w1", clusterConfig(t, url, "w1"), "worker", "--id", "w1")
	w1.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })
	out, err := api.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	th := out["id"].(string)
	const slow = 120
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": fmt.Sprint("slow ", slow)}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(th, func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") }); err != nil {
		t.Fatal(err)
	}
	w2 := startRole(t, "w2", clusterConfig(t, url, "w2"), "worker", "--id", "w2")
	w2.stdout.wait(t, "w2 running", func(l string) bool { return strings.Contains(l, "running") })
	w1.stop(syscall.SIGKILL)

	whole := strings.TrimSpace(demoagent.SlowAnswer(slow))
	if err := api.waitFor(th, func(m webMessage) bool {
		return m.Role == "assistant" && m.Kind == "text" && strings.TrimSpace(m.Text) == whole
	}); err != nil {
		t.Fatal(err)
	}
	ms, err := api.messages(th)
	if err != nil {
		t.Fatal(err)
	}
	cut, again, whence := 0, 0, -1
	for i, m := range ms {
		if strings.Contains(m.Text, sysmsg.WorkerLost{Again: true}.Body()) {
			cut++
			whence = i
		}
		if m.Role == "assistant" && m.Kind == "text" && strings.TrimSpace(m.Text) == whole {
			again++
			if whence < 0 {
				t.Errorf("the whole answer came before the notice that the turn was cut off: %+v", ms)
			}
		}
	}
	if cut != 1 || again != 1 {
		t.Errorf("told %d times that the turn was cut off and is answered again, answered whole %d times; want once each: %+v", cut, again, ms)
	}
	if len(w2.stderr.records("taking a thread over")) != 1 {
		t.Errorf("w2 took the thread over %d times, want once", len(w2.stderr.records("taking a thread over")))
	}
	if len(w2.stderr.records("taking an event")) != 0 {
		t.Errorf("w2 handed an event to the thread; the take-over event should reach none")
	}
}
