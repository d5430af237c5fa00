package discord

import (
	"context"
	"os"
	"testing"

	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/sandbox/egress"
)

// demoAgentEnv makes the test binary serve as the demo agent.
const demoAgentEnv = "DISCORD_TEST_DEMO_AGENT"

// TestMain lets the test binary serve as the demo agent, so that the
// end-to-end test starts it as a real subprocess, and as the parent of a
// sandboxed real agent (its network's forwarder).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" { // a sandboxed agent's parent (network allow)
		os.Exit(egress.RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(demoAgentEnv) != "" {
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
