package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/acpgw/gateway/demoagent"
)

// TestMain lets the test binary serve as the demo agent: the tests start
// it as a real subprocess through the same spawn code as real agents.
func TestMain(m *testing.M) {
	if path, ok := os.LookupEnv("SESSION_TEST_MUTE_AGENT"); ok {
		muteAgent(path)
		os.Exit(0)
	}
	if os.Getenv("SESSION_TEST_DEAF_AGENT") != "" {
		deafAgent()
		os.Exit(0)
	}
	if os.Getenv("SESSION_TEST_DEMO_AGENT") != "" {
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// deafAgent answers initialize and session/new, and on a prompt sends one
// chunk, closes its stdin (so session/cancel cannot be written) and hangs.
func deafAgent() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil {
			continue
		}
		send := func(s string) { os.Stdout.WriteString(s + "\n") }
		switch req.Method {
		case "initialize":
			send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}`)
		case "session/new":
			send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"sessionId":"deaf-1"}}`)
		case "session/prompt":
			send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"deaf-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"working"}}}}`)
			os.Stdin.Close()
			select {}
		}
	}
}

// muteAgent never answers: an agent stuck in its start (waiting for a
// login, a download). On initialize it writes its pid to the FIFO at
// path, if any, so a test knows the gateway is waiting for it. With
// SESSION_TEST_MUTE_HOLD set to a FIFO, it first waits for a writer to
// open that FIFO, before it reads anything: a process that is slow to come
// up, as on a loaded machine.
func muteAgent(path string) {
	if hold := os.Getenv("SESSION_TEST_MUTE_HOLD"); hold != "" {
		if f, err := os.Open(hold); err == nil {
			f.Close()
		}
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) == nil && req.Method == "initialize" && path != "" {
			if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				fmt.Fprintf(f, "%d\n", os.Getpid())
				f.Close()
			}
		}
	}
}
