package agent_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acpgw/gateway/agent"
)

// fakeGateway is a gateway in a test-binary process: it records its agents
// in the registry at path, starts the raw agent (which ignores stdin EOF
// and SIGTERM), has it spawn a child in its process group, prints "agent
// PID child PID" and waits to be killed.
func fakeGateway(path string) {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(1)
	}
	reg, err := agent.OpenRegistry(path, nil)
	if err != nil {
		fail(err)
	}
	p, err := agent.Start(context.Background(), rawSpec("RAW_AGENT_IGNORE_EOF=1"), agent.Options{Registry: reg})
	if err != nil {
		fail(err)
	}
	var rec recorder
	s, err := p.NewSession(context.Background(), os.TempDir(), &rec)
	if err != nil {
		fail(err)
	}
	if _, err := s.Prompt(context.Background(), "spawn"); err != nil {
		fail(err)
	}
	texts := rec.texts()
	var child int
	if _, err := fmt.Sscanf(texts[len(texts)-1], "spawned %d", &child); err != nil {
		fail(fmt.Errorf("%q: %w", texts[len(texts)-1], err))
	}
	fmt.Printf("agent %d child %d\n", p.Pid(), child)
	select {}
}

// pidfd opens a descriptor that becomes readable when pid exits.
func pidfd(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// exits waits up to d for the process behind fd to exit.
func exits(t *testing.T, fd int, d time.Duration) bool {
	t.Helper()
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return n > 0
	}
}

// TestAgentsDieWithTheGateway crashes a gateway (SIGKILL): its agent dies
// with it (the parent-death signal), the agent's child in its process
// group is left behind, and the next gateway's start stops it.
func TestAgentsDieWithTheGateway(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.pids")
	exe, _ := os.Executable()
	gw := exec.Command(exe, "-test.run=^$")
	gw.Env = append(os.Environ(), "AGENT_TEST_GATEWAY="+path, "GORACE=atexit_sleep_ms=0")
	out, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Process.Kill(); _ = gw.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("fake gateway: %q, %v", line, err)
	}
	var agentPid, childPid int
	if _, err := fmt.Sscanf(line, "agent %d child %d", &agentPid, &childPid); err != nil {
		t.Fatalf("fake gateway said %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(-agentPid, syscall.SIGKILL) })
	agentFD, childFD := pidfd(t, agentPid), pidfd(t, childPid)
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(data), fmt.Sprintf("%d ", agentPid)) {
		t.Fatalf("registry = %q, %v; want the agent's group recorded", data, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("registry mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	_ = gw.Process.Kill() // the crash
	_ = gw.Wait()
	if !exits(t, agentFD, 10*time.Second) {
		t.Fatal("the agent outlived its gateway")
	}
	if exits(t, childFD, 0) {
		t.Fatal("the agent's child died with it: nothing is left behind to test")
	}

	// The next gateway starts.
	if _, err := agent.OpenRegistry(path, nil); err != nil {
		t.Fatalf("OpenRegistry: %v", err)
	}
	if !exits(t, childFD, 10*time.Second) {
		t.Fatal("the process group left behind survived the next start")
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("registry after start = %q, want empty", data)
	}
}

// TestRegistryKillsOnlyOurs: a recorded group whose leader is now another
// process (the pid was reused: another start time), or one from another
// boot, is left alone; the recorded process itself is killed.
func TestRegistryKillsOnlyOurs(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	dir := t.TempDir()
	reg, err := agent.OpenRegistry(filepath.Join(dir, "rec"), nil)
	if err != nil {
		t.Fatal(err)
	}
	agent.RegistryAdd(reg, p.Pid())
	data, err := os.ReadFile(filepath.Join(dir, "rec"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) != 4 {
		t.Fatalf("record %q: want PGID START SID BOOT", data)
	}
	var start uint64
	fmt.Sscan(f[1], &start)
	other := func(field int, v string) string {
		g := append([]string{}, f...)
		g[field] = v
		return strings.Join(g, " ") + "\n"
	}
	alive := func(what string) {
		t.Helper()
		// A SIGKILL sent before this cannot let the agent answer.
		var rec recorder
		if _, err := p.NewSession(t.Context(), t.TempDir(), &rec); err != nil {
			t.Fatalf("%s: the agent was killed: %v", what, err)
		}
	}
	for _, tc := range []struct{ name, rec string }{
		{"reused pid", other(1, fmt.Sprint(start+1))},
		{"earlier start", other(1, fmt.Sprint(start-1))},
		{"other session", other(2, "1")},
		{"other boot", other(3, "00000000-0000-0000-0000-000000000000")},
		{"garbage", "x y\n" + f[0] + "\n"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.rec), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := agent.OpenRegistry(path, nil); err != nil {
			t.Fatalf("%s: OpenRegistry: %v", tc.name, err)
		}
		alive(tc.name)
	}
	// The record as written: the agent is killed.
	if _, err := agent.OpenRegistry(filepath.Join(dir, "rec"), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the recorded agent was not killed")
	}
}
