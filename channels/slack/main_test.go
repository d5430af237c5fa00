package slack

import (
	"context"
	"os"
	"testing"

	"github.com/acpgw/gateway/demoagent"
)

// demoAgentEnv makes the test binary serve as the demo agent.
const demoAgentEnv = "SLACK_TEST_DEMO_AGENT"

// TestMain lets the test binary serve as the demo agent: the end-to-end
// test starts it as a real subprocess through the gateway's spawn code.
func TestMain(m *testing.M) {
	if os.Getenv(demoAgentEnv) != "" {
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
