package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/internal/sandboxtest"
)

// hostileSecret is in the gateway's environment and its configuration
// file; the hostile agent looks for it.
const hostileSecret = "AKIAhostile0secret0of0the0gateway"

// hostileScript is the hostile agent: it looks for what is not its own
// and writes what it found in its workspace ("LEAK ..." for each thing it
// reached, "OK ..." for each thing of its own it could use), then serves
// ACP as the demo agent, so that its turn ends as any other. The
// placeholders are filled in by the test.
const hostileScript = `#!/bin/bash
out="$PWD/probe.txt"
{
  for f in $(grep -l -a '@SECRET@' /proc/[0-9]*/environ 2>/dev/null); do echo "LEAK environ $f"; done
  for f in $(grep -l -a -- '--config' /proc/[0-9]*/cmdline 2>/dev/null); do echo "LEAK the gateway's process $f"; done
  for f in @DATA@/gateway.db @CONFIG@; do
    if [ -s "$f" ]; then echo "LEAK $f"; fi
    if grep -qs '@SECRET@' "$f"; then echo "LEAK secret in $f"; fi
  done
  for d in @DATA@/events @OTHER_WS@ @DATA@/agent-home/tidy @STATE@; do
    if [ -n "$(ls -A "$d" 2>/dev/null)" ]; then echo "LEAK $d"; fi
  done
  if [ "$(ls -A @DATA@/mcp 2>/dev/null | wc -l)" -gt 1 ]; then echo "LEAK other MCP sockets: $(ls @DATA@/mcp)"; fi
  curl -s --max-time 3 --unix-socket @OTHER_SOCK@ http://x/ -o /dev/null; rc=$?
  if [ $rc -ne 7 ]; then echo "LEAK the other thread's MCP socket (curl $rc)"; fi
  for p in @PORTS@; do
    if timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null; then echo "LEAK tcp 127.0.0.1:$p"; fi
    if [ -n "$HTTPS_PROXY" ]; then
      code=$(curl -s --max-time 5 --noproxy '' --proxy "$HTTPS_PROXY" -o /dev/null -w '%{http_code}' http://127.0.0.1:$p/)
      case "$code" in 403|000) ;; *) echo "LEAK 127.0.0.1:$p through the proxy: $code";; esac
      if curl -s --max-time 5 --noproxy '' -p --proxy "$HTTPS_PROXY" -o /dev/null http://127.0.0.1:$p/; then echo "LEAK a tunnel to 127.0.0.1:$p"; fi
    fi
  done
  if [ -n "$HTTPS_PROXY" ]; then echo "OK a proxy"; fi
  echo mine > "$HOME/probe.txt" && echo "OK home"
  echo mine > /tmp/probe.txt && echo "OK tmp"
  echo "OK probed"
} > "$out" 2>&1
exec @EXE@ demo-agent --state-dir "$HOME"
`

// TestSandboxHoldsAgainstAHostileAgent runs the gateway as a process whose
// environment and configuration hold a secret, with the web chat, metrics
// and a NATS server on loopback. A first thread's demo agent (sandboxed,
// network none) writes a report and sends it through its MCP server: a
// full turn works inside the sandbox, MCP included. A second thread's
// agent is hostile (network full): it finds no gateway process, no
// secret, no data dir, configuration, event log, other workspace, other
// agent's state or other MCP socket, and reaches none of the listeners,
// neither directly nor through its proxy; its own home, /tmp and
// workspace work, and its turn ends normally. The same script run
// unsandboxed finds the secrets (the probe can fail).
func TestSandboxHoldsAgainstAHostileAgent(t *testing.T) {
	sandboxtest.Require(t)
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set and curl is missing")
		}
		t.Skip("the hostile agent needs curl")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	state := filepath.Join(dir, "tidy-state")
	script := filepath.Join(dir, "agent", "hostile.sh")
	cfgFile := filepath.Join(dir, "gateway.yaml")
	yaml := fmt.Sprintf(`dataDir: %q
log: {format: json}
channels:
  web:
    listen: 127.0.0.1:0
    token: %q
metrics:
  listen: 127.0.0.1:0
cluster:
  nats:
    url: %s
agents:
  default: tidy
  list:
    tidy:
      command: [%q, demo-agent, --state-dir, %q]
      workspace: dir
      network: none
    hostile:
      command: [/bin/bash, %q]
      workspace: dir
      network: full
`, data, hostileSecret, n.ClientURL(), exe, state, script)
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", hostileSecret) // the gateway's own secret
	gw := startRole(t, "gateway", cfgFile, "run")
	web := gw.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	metrics := gw.stdout.wait(t, "the metrics address", func(l string) bool { return strings.Contains(l, "metrics at ") })
	// The gateway blanks its own environ block (harden), so the probe
	// below cannot be shown the secret by reading it here first; the
	// unsandboxed control run shows what the probe finds without the
	// sandbox.
	webURL, err := url.Parse(web[strings.Index(web, "http"):])
	if err != nil {
		t.Fatal(err)
	}
	webURL.RawQuery = ""
	c := client{t: t, base: webURL.String(), token: hostileSecret}

	// A full turn of the demo agent, its MCP server included.
	tidy := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+tidy+"/messages", map[string]string{"text": "write"})
	c.waitMessage(tidy, "the report sent through MCP", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "sent demo-report.txt")
	})
	c.waitIdle(tidy)
	otherWS, _ := filepath.Glob(filepath.Join(data, "workspaces", "web", "*", tidy))
	socks, _ := filepath.Glob(filepath.Join(data, "mcp", "*.sock"))
	if len(otherWS) != 1 || len(socks) != 1 {
		t.Fatalf("the first thread's workspace %v and MCP socket %v", otherWS, socks)
	}
	if _, err := os.Stat(filepath.Join(otherWS[0], "demo-report.txt")); err != nil {
		t.Fatalf("the demo agent's report is not in its workspace: %v", err)
	}

	ports := []string{webURL.Port(), port(metrics), port(n.ClientURL())}
	body := strings.NewReplacer("@SECRET@", hostileSecret, "@DATA@", data, "@CONFIG@", cfgFile, "@OTHER_WS@", otherWS[0],
		"@STATE@", state, "@OTHER_SOCK@", socks[0], "@PORTS@", strings.Join(ports, " "), "@EXE@", exe).Replace(hostileScript)
	if err := os.MkdirAll(filepath.Dir(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Run("unsandboxed the probe finds it all", func(t *testing.T) {
		wd := t.TempDir()
		cmd := exec.Command("/bin/bash", script)
		cmd.Dir, cmd.Env = wd, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		_ = cmd.Run() // the demo agent ends at once: no stdin
		out, _ := os.ReadFile(filepath.Join(wd, "probe.txt"))
		// The gateway blanks its environ block itself (harden), so even
		// unsandboxed the probe finds no secret there.
		t.Logf("unsandboxed, the hostile agent found:\n%s", out)
		for _, want := range []string{"LEAK the gateway's process", "LEAK secret in " + cfgFile, "LEAK " + data + "/gateway.db", "LEAK " + otherWS[0], "LEAK tcp 127.0.0.1:" + ports[0], "LEAK tcp 127.0.0.1:" + ports[2]} {
			if !strings.Contains(string(out), want) {
				t.Errorf("without a sandbox the probe did not report %q:\n%s", want, out)
			}
		}
	})

	hostile := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+hostile+"/messages", map[string]string{"text": "echo done", "agent": "hostile"})
	c.waitMessage(hostile, "the hostile agent's answer", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "done" })
	ws, _ := filepath.Glob(filepath.Join(data, "workspaces", "web", "*", hostile))
	if len(ws) != 1 {
		t.Fatalf("the hostile thread's workspace: %v", ws)
	}
	out, err := os.ReadFile(filepath.Join(ws[0], "probe.txt"))
	if err != nil {
		t.Fatalf("the hostile agent wrote nothing in its workspace: %v", err)
	}
	t.Logf("the sandboxed hostile agent found:\n%s", out)
	if strings.Contains(string(out), "LEAK") {
		t.Errorf("the sandboxed agent reached what is not its own:\n%s", out)
	}
	for _, want := range []string{"OK a proxy", "OK home", "OK tmp", "OK probed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the sandboxed agent did not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "agent-home", "hostile", "probe.txt")); err != nil {
		t.Errorf("what the agent wrote in its home is not in dataDir/agent-home/hostile: %v", err)
	}
}

// port is the port of an address or URL's host:port (what follows its
// last colon, up to a slash).
func port(s string) string {
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, "/metrics")
	return s[strings.LastIndex(s, ":")+1:]
}

// TestUnsandboxedIsSaid: with agents.sandbox: off the gateway starts,
// and /readyz says that agents run unsandboxed (still ready).
func TestUnsandboxedIsSaid(t *testing.T) {
	cfg, f := testConfig(t, "agents:\n  sandbox: off\n")
	g := startGateway(t, cfg, f, hooks{})
	resp, err := http.Get("http://" + g.metricsAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "sandbox: off (agents.sandbox: off): agents run unsandboxed") {
		t.Errorf("/readyz = %d %q, want 200 and the warning", resp.StatusCode, b)
	}
}

// TestRefusesWithoutSandbox: where no sandbox can be had, the gateway
// refuses to start, naming agents.sandbox and its allowed values, unless
// it is off.
func TestRefusesWithoutSandbox(t *testing.T) {
	probe := sandboxProbe
	t.Cleanup(func() { sandboxProbe = probe })
	sandboxProbe = func() (string, error) { return "", errors.New("sandbox: bubblewrap (bwrap) is not installed") }
	for _, mode := range []string{"auto", "bwrap"} {
		cfg, f := testConfig(t, "agents:\n  sandbox: "+mode+"\n")
		_, err := start(t.Context(), cfg, f, testLogger(t), hooks{})
		want := "agents.sandbox: " + mode + ": no sandbox can be had on this machine: bubblewrap (bwrap) is not installed; install bubblewrap, or set agents.sandbox: off to run agents unsandboxed (allowed: auto bwrap off)"
		if err == nil || err.Error() != want {
			t.Errorf("%s: start: %v, want %q", mode, err, want)
		}
	}
	cfg, f := testConfig(t, "agents:\n  sandbox: off\n")
	startGateway(t, cfg, f, hooks{})
}

// TestUnsandboxedWorkerIsSaid: a worker with agents.sandbox: off says in
// its /readyz that agents run unsandboxed, and is still ready.
func TestUnsandboxedWorkerIsSaid(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	w := startRole(t, "w1", clusterConfig(t, n.ClientURL(), "w1"), "worker", "--id", "w1", "--set", "metrics.listen=127.0.0.1:0", "--set", "agents.sandbox=off")
	l := w.stdout.wait(t, "the worker's metrics address", func(l string) bool { return strings.Contains(l, "metrics at ") })
	w.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })
	code, body := scrape(t, strings.TrimSuffix(l[strings.Index(l, "http"):], "/metrics")+"/readyz")
	if code != http.StatusOK || !strings.HasPrefix(body, "sandbox: off (agents.sandbox: off): agents run unsandboxed") || !strings.HasSuffix(body, "ok\n") {
		t.Errorf("the worker's /readyz = %d %q, want 200, the warning and ok", code, body)
	}
}
