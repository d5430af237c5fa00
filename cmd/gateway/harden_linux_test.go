package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The secrets of TestGatewayProcessKeepsSecrets, in the gateway's
// environment at start.
const (
	webSecret   = "web-secret-0123456789abcdef" // channels.web.token: ${WEB_SECRET}
	envOnly     = "discord-env-0123456789"      // DISCORD_TOKEN, referenced by nothing
	shortSecret = "sh0rt"                       // another agent's env: ${OTHER_KEY}, too short to be withheld by value
)

// everyName is an inheritEnv that lists every upper-case variable.
var everyName = func() string {
	var out []string
	for c := 'A'; c <= 'Z'; c++ {
		out = append(out, string(c)+"*")
	}
	return strings.Join(out, ", ")
}()

// asUser is how the processes of the test run: as uid and gid 65534
// (nobody) when the test runs as root, else as the test's own user.
func asUser() *syscall.SysProcAttr {
	if os.Geteuid() != 0 {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

// readAs reads path as asUser, with cat: the content, or the error cat
// reported.
func readAs(t *testing.T, path string) (string, error) {
	t.Helper()
	cmd := exec.Command("cat", path)
	cmd.SysProcAttr = asUser()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// sharedDir is a directory every user can use, removed at the end.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gateway-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGatewayProcessKeepsSecrets runs the gateway binary as a user
// (nobody when the test is root) with secrets in its environment, and an
// agent that inherits every variable it may (inheritEnv: [A*, ..., Z*]) and reads
// its parent's /proc/PID/environ. The agent sees no secret, another
// process of the gateway's user cannot read the gateway's environ, mem
// or maps (a process of that user that is not the gateway can be read:
// the check works), the environment block root reads is blank, and a
// reload still resolves ${WEB_SECRET}.
func TestGatewayProcessKeepsSecrets(t *testing.T) {
	dir := sharedDir(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gateway")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	spy := filepath.Join(dir, "spy.sh")
	script := fmt.Sprintf(`#!/bin/sh
env > %[1]s/agent-env
cat /proc/$PPID/environ > %[1]s/parent-environ 2> %[1]s/parent-environ.err
exec %[2]s demo-agent --state-dir %[1]s/demo
`, dir, bin)
	if err := os.WriteFile(spy, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "gateway.yaml")
	yaml := func(metaMode string) string {
		return fmt.Sprintf(`dataDir: %s/data
log: {format: json}
metrics: {listen: 127.0.0.1:0}
acp: {stream: {metaMode: %s}}
channels:
  web: {listen: 127.0.0.1:0, token: "${WEB_SECRET}"}
agents:
  sandbox: off # what an unsandboxed agent of the gateway's user can read
  default: spy
  list:
    spy: {command: [%s], inheritEnv: [%s]}
    other: {command: [other-agent], env: {KEY: "${OTHER_KEY}"}}
`, dir, metaMode, spy, everyName)
	}
	if err := os.WriteFile(cfgFile, []byte(yaml("minimal")), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "run", "--config", cfgFile)
	cmd.Env = append(os.Environ(), asGatewayEnv+"=1", "WEB_SECRET="+webSecret, "DISCORD_TOKEN="+envOnly, "OTHER_KEY="+shortSecret)
	cmd.SysProcAttr = asUser()
	// Its working directory (the agents' shared workspace) is one the
	// user can enter: the checkout may lie in a directory only root
	// enters (a clone in mktemp -d).
	cmd.Dir = dir
	gw := startProc(t, "gateway", cmd)
	line := gw.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.HasPrefix(l, "gateway: web chat at ") })
	u, err := url.Parse(strings.TrimPrefix(line, "gateway: web chat at "))
	if err != nil {
		t.Fatal(err)
	}
	c := client{t: t, base: "http://" + u.Host + "/", token: webSecret}
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"text": "echo one"})
	c.waitMessage(th, "the answer", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "one" })
	// The agent's MCP server reaches the gateway, which checks its
	// parents in /proc while not dumpable.
	c.post("api/threads/"+th+"/messages", map[string]string{"text": "message through the MCP server"})
	c.waitMessage(th, "the MCP tool's message", func(m webMessage) bool { return m.Text == "through the MCP server" })

	secrets := []string{webSecret, envOnly, "OTHER_KEY", "WEB_SECRET", "DISCORD_TOKEN"}
	for _, name := range []string{"agent-env", "parent-environ"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(got), s) {
				t.Errorf("the agent's %s holds %s:\n%s", name, s, got)
			}
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "parent-environ.err")); !strings.Contains(string(got), "Permission denied") {
		t.Errorf("the agent reading the gateway's environ got %q, want Permission denied", got)
	}

	pid := strconv.Itoa(gw.cmd.Process.Pid)
	for _, f := range []string{"environ", "mem", "maps"} {
		if got, err := readAs(t, "/proc/"+pid+"/"+f); err == nil || !strings.Contains(err.Error(), "Permission denied") {
			t.Errorf("a process of the gateway's user read /proc/PID/%s (%d bytes), %v; want Permission denied", f, len(got), err)
		}
	}
	if got, err := readAs(t, "/proc/"+pid+"/cmdline"); err != nil || !strings.Contains(got, "run") {
		t.Errorf("/proc/PID/cmdline = %q, %v; want it readable", got, err)
	}
	if os.Geteuid() == 0 {
		got, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.Trim(string(got), "\x00"); s != "" {
			t.Errorf("root reads an environment block that is not blank (%d bytes)", len(s))
		}
	}
	// The control: a process of the same user that is not the gateway is
	// read, secrets and all.
	// It says it is ready once it runs (not before its exec is done, when
	// its environ reads empty), and waits on its stdin.
	ctl := exec.Command("sh", "-c", "echo ready; read x")
	ctl.Env = []string{"WEB_SECRET=" + webSecret}
	ctl.SysProcAttr = asUser()
	ctlIn, err := ctl.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	ctlOut, err := ctl.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctlIn.Close(); ctl.Process.Kill(); ctl.Wait() })
	if line, err := bufio.NewReader(ctlOut).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the control said %q, %v", line, err)
	}
	if got, err := readAs(t, fmt.Sprintf("/proc/%d/environ", ctl.Process.Pid)); err != nil || !strings.Contains(got, webSecret) {
		t.Errorf("the control's environ = %q, %v; want it readable with the secret", got, err)
	}

	// The process's own metrics still work without its /proc files.
	m := gw.stdout.wait(t, "the metrics address", func(l string) bool { return strings.HasPrefix(l, "gateway: metrics at ") })
	resp, err := http.Get(strings.TrimPrefix(m, "gateway: metrics at "))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte("\nprocess_resident_memory_bytes ")) {
		t.Errorf("/metrics lacks process_resident_memory_bytes:\n%s", clipped(string(body)))
	}

	// A reload reads ${WEB_SECRET} from the environment of the start.
	if err := os.WriteFile(cfgFile, []byte(yaml("verbose")), 0o644); err != nil {
		t.Fatal(err)
	}
	gw.stderr.wait(t, "the reload", func(l string) bool {
		if strings.Contains(l, "configuration change rejected") {
			t.Fatalf("the reload was rejected: %s", l)
		}
		return strings.Contains(l, `"msg":"configuration reloaded"`)
	})
	th2 := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th2+"/messages", map[string]string{"text": "echo two"})
	c.waitMessage(th2, "the answer after the reload", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "two" })
}

func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
