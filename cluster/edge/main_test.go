package edge_test

import (
	"context"
	"os"
	"testing"

	"github.com/acpgw/gateway/demoagent"
)

// demoAgentEnv makes the test binary serve as the demo agent.
const demoAgentEnv = "EDGE_TEST_DEMO_AGENT"

// TestMain lets the test binary serve as the demo agent, so that the
// worker starts it as a real subprocess.
func TestMain(m *testing.M) {
	if os.Getenv(demoAgentEnv) != "" {
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
