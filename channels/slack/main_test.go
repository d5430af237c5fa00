package slack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acpgw/gateway/demoagent"
)

// demoAgentEnv makes the test binary serve as the demo agent.
const demoAgentEnv = "SLACK_TEST_DEMO_AGENT"

// TestMain lets the test binary serve as the demo agent: the end-to-end
// test starts it as a real subprocess through the gateway's spawn code.
func TestMain(m *testing.M) {
	if os.Getenv(demoAgentEnv) == "" {
		os.Exit(m.Run())
	}
	var args []string
	for _, a := range os.Args[1:] {
		if !strings.HasPrefix(a, "-test.") {
			args = append(args, a)
		}
	}
	o, err := demoagent.ParseFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	err = demoagent.Run(context.Background(), os.Stdin, os.Stdout, o)
	switch {
	case errors.Is(err, demoagent.ErrCrash):
		os.Exit(demoagent.CrashExitStatus)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
