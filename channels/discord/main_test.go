package discord

import (
	"context"
	"os"
	"testing"

	"github.com/acpgw/gateway/demoagent"
)

// demoAgentEnv makes the test binary serve as the demo agent.
const demoAgentEnv = "DISCORD_TEST_DEMO_AGENT"

// TestMain lets the test binary serve as the demo agent, so that the
// end-to-end test starts it as a real subprocess.
func TestMain(m *testing.M) {
	if os.Getenv(demoAgentEnv) != "" {
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
