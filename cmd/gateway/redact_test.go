package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/mcpgate"
)

// TestEventLogRedactsTheMCPToken runs real turns whose agent calls the
// gateway's MCP server (the demo agent's "message" scenario), in a new
// session and, after a restart, a resumed one: each call works (the
// agent got the token), and the event log's session/new and session/resume
// hold agent.Redacted where the token was, the socket's path as it was.
func TestEventLogRedactsTheMCPToken(t *testing.T) {
	cfg, f := testConfig(t, "")
	say := func(g *gateway, th, text string) {
		t.Helper()
		c := webClient(t, g)
		c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "message " + text})
		c.waitMessage(th, "the tool's message", func(m webMessage) bool { return m.Text == text })
		c.waitIdle(th)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g, err := start(ctx, cfg, f, testLogger(t), hooks{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	th := webClient(t, g).post("api/threads", map[string]any{})["id"].(string)
	say(g, th, "sent through the MCP server")
	cancel()
	if err := g.wait(); err != nil {
		t.Fatal(err)
	}
	say(startGateway(t, cfg, f, hooks{}), th, "sent again after the restart")

	bs, err := e2eStore(t, cfg.DataDir).Bindings(t.Context())
	if err != nil || len(bs) != 1 {
		t.Fatalf("bindings %+v, %v", bs, err)
	}
	raw, err := os.ReadFile(filepath.Join(cfg.DataDir, "events", eventlogName(bs[0].SessionID)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var fr struct {
			Method string
			Params struct {
				MCPServers []struct {
					Env []struct{ Name, Value string }
				} `json:"mcpServers"`
			}
		}
		if json.Unmarshal(sc.Bytes(), &fr) != nil || (fr.Method != "session/new" && fr.Method != "session/load" && fr.Method != "session/resume") {
			continue
		}
		seen[fr.Method]++
		if len(fr.Params.MCPServers) != 1 {
			t.Fatalf("%s has %d MCP servers, want the gateway's: %s", fr.Method, len(fr.Params.MCPServers), sc.Bytes())
		}
		env := map[string]string{}
		for _, e := range fr.Params.MCPServers[0].Env {
			env[e.Name] = e.Value
		}
		if got := env[mcpgate.EnvToken]; got != agent.Redacted {
			t.Errorf("%s: %s = %q in the event log, want %q", fr.Method, mcpgate.EnvToken, got, agent.Redacted)
		}
		if got := env[mcpgate.EnvSocket]; !strings.HasPrefix(got, filepath.Join(cfg.DataDir, "mcp")+"/") {
			t.Errorf("%s: %s = %q, want the socket's path", fr.Method, mcpgate.EnvSocket, got)
		}
	}
	if seen["session/new"] != 1 || seen["session/resume"] != 1 {
		t.Errorf("the event log has %v, want one session/new and one session/resume", seen)
	}
}
