package agent_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/sandboxtest"
	"github.com/acpgw/gateway/sandbox"
)

// TestSandboxedTurn: an agent given a sandbox runs in it (its process is
// bwrap; /proc shows its own namespace only), a session and a turn work,
// its state directory (its home) keeps what it wrote, and what a session
// writes in its workspace is there on the host.
func TestSandboxedTurn(t *testing.T) {
	sandboxtest.Require(t)
	home, ws := t.TempDir(), t.TempDir()
	exe, _ := os.Executable()
	spec := demoSpec(home)
	spec.Sandbox = &sandbox.Spec{Home: home, Exe: exe, Workspace: ws}
	spec.Dir = ws
	p := start(t, spec, agent.Options{})
	if b, err := os.ReadFile("/proc/" + itoa(p.Pid()) + "/cmdline"); err != nil || !strings.Contains(string(b), "bwrap") {
		t.Errorf("the agent's process is %q (%v), want bwrap", b, err)
	}
	var rec recorder
	s, err := p.NewSession(t.Context(), ws, &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	stop, err := s.Prompt(t.Context(), "write")
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt: %q, %v", stop, err)
	}
	if got := strings.Join(rec.texts(), ""); !strings.Contains(got, "I wrote demo-report.txt") {
		t.Errorf("the agent said %q, want that it wrote its report", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "demo-report.txt")); err != nil {
		t.Errorf("the report is not in the workspace on the host: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, s.ID+".json")); err != nil {
		t.Errorf("the agent's state is not in its home on the host: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
