package main

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// scrape GETs url and returns the status and the body.
func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sample sums the values of metric's series in a Prometheus text body
// that have every one of labels.
func sample(body, metric string, labels ...string) float64 {
	sum := 0.0
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		series, value, ok := strings.Cut(sc.Text(), " ")
		name, _, _ := strings.Cut(series, "{")
		if !ok || name != metric {
			continue
		}
		all := true
		for _, lb := range labels {
			all = all && strings.Contains(series, lb)
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil && all {
			sum += v
		}
	}
	return sum
}

// An edge and a worker started with metrics.listen serve /metrics,
// /healthz and /readyz: ready while connected and not draining, the
// worker's turns, deliveries and claims and the edge's inbound events and
// operations counted after a prompt; a draining worker is not ready.
func TestClusterRolesServeMetrics(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()
	set := []string{"--set", "metrics.listen=127.0.0.1:0"}
	edge := startRole(t, "edge", clusterConfig(t, url, "edge"), append([]string{"edge", "--id", "e1"}, set...)...)
	line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	api := webAPIAt(line[strings.Index(line, "http"):])
	metricsURL := func(r *role) string {
		l := r.stdout.wait(t, r.name+"'s metrics address", func(l string) bool { return strings.Contains(l, "metrics at ") })
		return strings.TrimSuffix(l[strings.Index(l, "http"):], "/metrics")
	}
	edgeURL := metricsURL(edge)
	worker := startRole(t, "w1", clusterConfig(t, url, "w1"), append([]string{"worker", "--id", "w1"}, set...)...)
	workerURL := metricsURL(worker)
	worker.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })

	for _, u := range []string{edgeURL, workerURL} {
		for _, path := range []string{"/healthz", "/readyz"} {
			if code, body := scrape(t, u+path); code != http.StatusOK || body != "ok\n" {
				t.Errorf("GET %s%s: %d %q, want 200 ok", u, path, code, body)
			}
		}
	}
	_, before := scrape(t, workerURL+"/metrics")
	if v := sample(before, "gateway_cluster_claims_total", `result="won"`); v != 0 {
		t.Errorf("claims won before any prompt: %v", v)
	}

	out, err := api.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	th := out["id"].(string)
	want := "counted on both sides"
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo " + want}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(th, func(m webMessage) bool { return m.Role == "assistant" && m.Text == want }); err != nil {
		t.Fatal(err)
	}
	// Once the turn is over, everything of it has been counted.
	client{t: t, base: api.base}.waitIdle(th)

	_, wm := scrape(t, workerURL+"/metrics")
	for _, c := range []struct {
		prefix string
		labels []string
		want   float64
	}{
		{"gateway_turns_total", []string{`platform="web"`, `stop_reason="end_turn"`}, 1},
		{"gateway_cluster_claims_total", []string{`result="won"`}, 1},
		{"gateway_cluster_claims_total", []string{`result="lost"`}, 0},
		{"gateway_cluster_threads_owned", nil, 1},
		{"gateway_cluster_leases_lost_total", nil, 0},
		{"gateway_cluster_connected", nil, 1},
		{"gateway_cluster_draining", nil, 0},
		{"gateway_agent_processes", nil, 1},
	} {
		if got := sample(wm, c.prefix, c.labels...); got != c.want {
			t.Errorf("worker: %s%v = %v, want %v", c.prefix, c.labels, got, c.want)
		}
	}
	if got := sample(wm, "gateway_messages_total", `platform="web"`, `kind="text"`); got < 1 {
		t.Errorf("worker: no text message delivered counted (%v)", got)
	}
	_, em := scrape(t, edgeURL+"/metrics")
	if got := sample(em, "gateway_edge_inbound_total", `platform="web"`, `result="stored"`); got != 1 {
		t.Errorf("edge: %v inbound events stored, want the prompt's 1", got)
	}
	if got := sample(em, "gateway_edge_operations_total", `platform="web"`, `result="ok"`); got < 1 {
		t.Errorf("edge: %v operations performed, want some", got)
	}
	if got := sample(em, "gateway_edge_operations_total", `op="post"`, `result="ok"`); got < 1 {
		t.Errorf("edge: %v posts performed, want the answer's", got)
	}
	for _, s := range []string{`gateway_channel_connected{platform="web"} 1`, "gateway_cluster_connected 1", "gateway_cluster_draining 0"} {
		if !strings.Contains(em, s+"\n") {
			t.Errorf("edge metrics lack %q", s)
		}
	}
	if t.Failed() {
		t.Logf("worker:\n%s\nedge:\n%s", wm, em)
	}

	// Draining: a turn runs, the worker is told to stop; it is not ready
	// while it lets the turn finish.
	if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "slow 30"}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(th, func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") }); err != nil {
		t.Fatal(err)
	}
	_ = worker.cmd.Process.Signal(syscall.SIGTERM)
	worker.stderr.wait(t, "the drain", func(l string) bool { return strings.Contains(l, `"draining: claiming no new thread`) })
	code, body := scrape(t, workerURL+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "draining") {
		t.Errorf("GET /readyz of a draining worker: %d %q, want 503 saying it drains", code, body)
	}
	if _, m := scrape(t, workerURL+"/metrics"); !strings.Contains(m, "gateway_cluster_draining 1\n") {
		t.Errorf("a draining worker's metrics lack gateway_cluster_draining 1")
	}
	worker.stop(syscall.SIGTERM)
}

// A node whose NATS connection is gone is not ready, and says why.
func TestNodeNotReadyWithoutNATS(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if why := notReadyNode(nc, false, nil); len(why) != 0 {
		t.Errorf("connected: not ready because %q", why)
	}
	nc.Close()
	why := notReadyNode(nc, true, nil)
	if len(why) != 2 || !strings.HasPrefix(why[0], "nats: not connected") || !strings.HasPrefix(why[1], "draining") {
		t.Errorf("closed and draining: %q, want NATS and the drain named", why)
	}
}
