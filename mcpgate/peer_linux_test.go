package mcpgate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/mcpgate"
)

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPeerOutsideTheAgentsTreeIsRefused: with the right socket and token,
// the test process (the agent's parent) and a process of its own are
// refused and get nothing, each refusal logged with its pid; a child of
// the agent (as the MCP server it starts is) is answered. Before the
// agent is set, even a child of it is refused.
func TestPeerOutsideTheAgentsTreeIsRefused(t *testing.T) {
	th := &mcpgate.FakeThread{}
	var logs lockedBuffer
	srv, err := mcpgate.Open(mcpgate.Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: t.TempDir(), MaxFileBytes: 1024, Command: "/bin/gateway",
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, th)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), mcpgate.EnvSocket+"="+srv.SocketPath(), mcpgate.EnvToken+"="+srv.Token())
	call := func(text string) string {
		t.Helper()
		cmd := exec.Command(exe, "call", text)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("call %q: %v", text, err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := call("before the agent is set"); !strings.Contains(got, `answer "" refusal ""`) || strings.Contains(got, "err <nil>") {
		t.Errorf("before SetAgent: %s; want no answer, a connection error", got)
	}

	// The agent: a shell that, told to, runs the caller as its child.
	agentProc := exec.Command("sh", "-c", `read x; "$0" call "$1"; :`, exe, "from the agent's child")
	agentProc.Env = env
	stdin, err := agentProc.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var agentOut bytes.Buffer
	agentProc.Stdout = &agentOut
	if err := agentProc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agentProc.Process.Kill(); agentProc.Wait() })
	srv.SetAgent(agentProc.Process.Pid)

	if answer, refusal, err := mcpgate.Call(t.Context(), srv.SocketPath(), srv.Token(), mcpgate.ToolSendMessage, "from the test"); err == nil {
		t.Errorf("the agent's parent got an answer: %q, %q", answer, refusal)
	}
	outside := exec.Command(exe, "call", "from outside")
	outside.Env = env
	var outsideOut bytes.Buffer
	outside.Stdout = &outsideOut
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	outsidePid := outside.Process.Pid
	if err := outside.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := outsideOut.String(); !strings.Contains(got, `answer "" refusal ""`) || strings.Contains(got, "err <nil>") {
		t.Errorf("a process outside the agent's tree: %s; want no answer, a connection error", got)
	}

	fmt.Fprintln(stdin, "go")
	stdin.Close()
	if err := agentProc.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(agentOut.String()), `answer "sent the message to the thread" refusal "" err <nil>`; got != want {
		t.Errorf("the agent's child: %s, want %s", got, want)
	}
	if _, msgs, _ := th.Calls(); !cmp.Equal(msgs, []string{"from the agent's child"}) {
		t.Errorf("the thread got %q, want only the agent's child's message", msgs)
	}

	refused := map[float64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(l), &r) == nil && strings.Contains(fmt.Sprint(r["msg"]), "outside the agent's process tree was refused") {
			pid, _ := r["pid"].(float64)
			refused[pid] = true
		}
	}
	for _, pid := range []int{os.Getpid(), outsidePid} {
		if !refused[float64(pid)] {
			t.Errorf("no refusal logged for pid %d; the log:\n%s", pid, logs.String())
		}
	}
}
