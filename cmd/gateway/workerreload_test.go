package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go/jetstream"
)

// A worker reloads its configuration file when it changes, as gateway run
// does: the stream settings and the default agent apply to the next
// thread without a restart, and a changed setting that needs one
// (cluster.leaseTTL) is named in the log.
func TestWorkerReloads(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()
	edge := startRole(t, "edge", clusterConfig(t, url, "edge"), "edge", "--id", "e1")
	line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	api := webAPI{base: line[strings.Index(line, "http"):]}
	cfgFile := clusterConfig(t, url, "w1")
	base, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	worker := startRole(t, "w1", cfgFile, "worker", "--id", "w1")
	worker.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })

	tools := func(th string) int {
		t.Helper()
		if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "tools"}); err != nil {
			t.Fatal(err)
		}
		if err := api.waitFor(th, func(m webMessage) bool { return m.Role == "assistant" && strings.Contains(m.Text, "One test fails") }); err != nil {
			t.Fatal(err)
		}
		client{t: t, base: api.base}.waitIdle(th)
		ms, err := api.messages(th)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range ms {
			if m.Kind == "tool" {
				n++
			}
		}
		return n
	}
	newThread := func() string {
		t.Helper()
		out, err := api.post("api/threads", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		return out["id"].(string)
	}
	before := newThread()
	if n := tools(before); n == 0 {
		t.Fatal("no tool line before the reload")
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(base), "leaseTTL: 2s", "leaseTTL: 3s", 1) +
		"acp:\n  stream:\n    metaMode: \"off\"\n" +
		fmt.Sprintf("agents:\n  default: second\n  list:\n    second:\n      command: [%q, demo-agent, --state-dir, %q]\n", exe, filepath.Join(t.TempDir(), "second"))
	if err := os.WriteFile(cfgFile, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	worker.stderr.wait(t, "the reload", func(l string) bool { return strings.Contains(l, `"configuration reloaded"`) })
	restart := worker.stderr.records("configuration changes that take effect at the next start of the worker")
	if len(restart) != 1 || restart[0]["keys"] != "cluster.leaseTTL" {
		t.Errorf("restart keys logged: %v, want cluster.leaseTTL named once", restart)
	}

	after := newThread()
	if n := tools(after); n != 0 {
		t.Errorf("%d tool lines shown with metaMode off after the reload", n)
	}
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, err := jsstore.Open(t.Context(), js, jsstore.Options{Cluster: "harness"})
	if err != nil {
		t.Fatal(err)
	}
	// The worker saves a binding apart from the answer (asynchronously):
	// each change of the bucket is a time to look again.
	kv, err := js.KeyValue(t.Context(), "harness_bindings")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	changes, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer changes.Stop()
	for {
		wrong := ""
		for th, want := range map[string]string{before: "demo", after: "second"} {
			b, ok, err := st.Binding(t.Context(), channels.ThreadRef{Platform: web.Platform, Channel: web.Channel, Thread: th})
			if err != nil || !ok || b.Agent != want {
				wrong += fmt.Sprintf("thread %s: binding %+v (%v, %v), want agent %s; ", th, b, ok, err, want)
			}
		}
		if wrong == "" {
			return
		}
		select {
		case <-changes.Updates():
		case <-ctx.Done():
			t.Fatal(wrong)
		}
	}
}
