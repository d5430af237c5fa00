package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procRecord returns pid's line of the agent registry (agents.pids):
// "PGID START SID BOOT" from /proc.
func procRecord(t *testing.T, pid int) string {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	// f[0] is field 3 of stat: session is field 6, starttime field 22.
	return fmt.Sprintf("%d %s %s %s\n", pid, f[19], f[3], strings.TrimSpace(string(boot)))
}

// TestStartStopsAgentsLeftBehind: an agent process group recorded by a
// gateway that crashed is stopped when the next one starts; the agents the
// new gateway runs are recorded in their place.
func TestStartStopsAgentsLeftBehind(t *testing.T) {
	cfg, f := testConfig(t, "")
	exe, _ := os.Executable()
	left := exec.Command(exe, "demo-agent", "--state-dir", t.TempDir())
	left.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if _, err := left.StdinPipe(); err != nil { // kept open: it would exit on EOF
		t.Fatal(err)
	}
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	t.Cleanup(func() { _ = left.Process.Kill() })
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	pids := filepath.Join(cfg.DataDir, "agents.pids")
	if err := os.WriteFile(pids, []byte(procRecord(t, left.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}

	g := startGateway(t, cfg, f, hooks{})
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("the agent left behind ended with %v, want killed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent left behind still runs after the gateway started")
	}

	c := webClient(t, g)
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo hi"})
	// The agent's answer, not only "not typing": the state read first may
	// come before the turn started.
	c.waitMessage(th, "the agent's answer", func(m webMessage) bool { return m.Role == "assistant" && m.Kind == "text" })
	data, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil || string(data) != procRecord(t, pid) {
		t.Errorf("agents.pids = %q, want the running demo agent's record", data)
	}
}
