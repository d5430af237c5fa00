package agent_test

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/sandbox/egress"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" { // a sandboxed agent's parent (network full, allow)
		os.Exit(egress.RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("RAW_SLEEPER") != "" { // first: it inherits RAW_AGENT
		rawIgnoreTerm()
	}
	if os.Getenv("AGENT_TEST_DEMO") != "" {
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("RAW_AGENT") != "" {
		rawAgent()
		os.Exit(0)
	}
	if path := os.Getenv("AGENT_TEST_GATEWAY"); path != "" {
		fakeGateway(path)
	}
	os.Exit(m.Run())
}

// rawIgnoreTerm blocks forever, ignoring SIGTERM: an agent that only
// SIGKILL ends.
func rawIgnoreTerm() {
	signal.Ignore(syscall.SIGTERM)
	for {
		time.Sleep(time.Hour)
	}
}
