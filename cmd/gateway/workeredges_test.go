package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// A worker whose configuration names no platform (no channels section,
// no token) serves the platforms the edges announce, an edge that starts
// after it included: a prompt in the edge's web chat is answered.
func TestWorkerServesTheEdgesPlatforms(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()

	dir := t.TempDir()
	wcfg := filepath.Join(dir, "worker.yaml")
	yaml := fmt.Sprintf(`dataDir: %s
log:
  format: json
metrics:
  listen: ""
cluster:
  name: harness
  leaseTTL: 2s
%s`, filepath.Join(dir, "data"), clustertest.RoleYAML(t, url, ""))
	if err := os.WriteFile(wcfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	w := startRole(t, "w1", wcfg, "worker", "--id", "w1")
	w.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })
	if got := w.stderr.records("channel enabled"); len(got) != 0 {
		t.Fatalf("the worker serves %v before any edge announced a platform", got)
	}

	edge := startRole(t, "edge", clusterConfig(t, url, "edge"), "edge", "--id", "e1")
	line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	api := webAPI{base: line[strings.Index(line, "http"):]}
	out, err := api.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	th := out["id"].(string)
	const want = "answered by a worker without a platform of its own"
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo " + want}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(th, func(m webMessage) bool { return m.Role == "assistant" && m.Text == want }); err != nil {
		t.Fatal(err)
	}
	enabled := w.stderr.records("channel enabled")
	if len(enabled) != 1 || enabled[0]["platform"] != "web" {
		t.Errorf("the worker enabled %v, want the web chat once", enabled)
	}
}
