package main

import (
	"bufio"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestSandboxExec: the hidden "gateway sandbox-exec" runs its command,
// passes SIGTERM on to it and exits with the command's status.
func TestSandboxExec(t *testing.T) {
	cmd := exec.Command(os.Args[0], "sandbox-exec", "--mode=none", "--", "sh", "-c", `trap 'exit 9' TERM; echo ready; read x`)
	cmd.Env = append(os.Environ(), asGatewayEnv+"=1")
	stdin, err := cmd.StdinPipe() // held open: the agent waits on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("agent said %q, %v; want ready", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := cmd.ProcessState.ExitCode(); got != 9 {
		t.Errorf("gateway sandbox-exec exited %d (%v), want 9, the agent's status after the SIGTERM it was passed", got, cmd.ProcessState)
	}
}
