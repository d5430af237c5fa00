package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/store"
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
	api := webAPIAt(line[strings.Index(line, "http"):])
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

// A take-over that came to nothing is published again by the next round
// of scans, not dropped as a duplicate for the whole duplicate window;
// workers scanning in the same round store it once.
func TestOrphanScanRounds(t *testing.T) {
	js := clustertest.JetStream(t, clustertest.StartNode(t).ClientURL())
	ctx := t.Context()
	const ttl = 15 * time.Second
	in, err := cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: "orph", DuplicateWindow: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	leases, err := cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: "orph", Owner: "w1", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "gw.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "t1"}
	started := time.Now().Add(-time.Hour)
	if err := st.MarkTurnRunning(ctx, store.RunningTurn{Thread: th, SessionID: "s", Started: started, Prompt: store.TurnPrompt{ID: "m1", Text: "hi"}}); err != nil {
		t.Fatal(err)
	}
	o := orphans{st: st, leases: leases, in: in, ttl: ttl, draining: func() bool { return false }, log: slog.New(slog.DiscardHandler)}
	stored := func() uint64 {
		t.Helper()
		s, err := js.Stream(ctx, "orph_inbound")
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	round := time.Now().Truncate(ttl)
	o.scan(ctx, round.Add(time.Second))
	o.scan(ctx, round.Add(2*time.Second)) // another worker, same round
	if got := stored(); got != 1 {
		t.Fatalf("two scans in one round stored %d take-over events, want 1", got)
	}
	// Nobody claimed the thread: the next round asks again.
	o.scan(ctx, round.Add(ttl+time.Second))
	if got := stored(); got != 2 {
		t.Fatalf("after a round with the thread still nobody's, %d take-over events stored, want 2", got)
	}
	// A thread someone holds is left alone.
	if _, err := leases.Claim(ctx, th.String()); err != nil {
		t.Fatal(err)
	}
	o.scan(ctx, round.Add(2*ttl+time.Second))
	if got := stored(); got != 2 {
		t.Fatalf("a thread with a lease got a take-over event: %d stored, want 2", got)
	}
}
