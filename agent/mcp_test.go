package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/agent"
)

// TestMCPServersInSessionNew: the MCP servers given to NewSession reach
// the agent as stdio entries of mcpServers, and none do when the spec has
// NoMCP (agents.list.NAME.mcp: false).
func TestMCPServersInSessionNew(t *testing.T) {
	srv := agent.MCPServer{Name: "gateway", Command: "/bin/gw", Args: []string{"mcp"}, Env: []string{"ACPGW_MCP_SOCKET=/s", "T=a=b"}}
	for _, tc := range []struct {
		name  string
		noMCP bool
		want  string
	}{
		{"passed", false, `[{"name":"gateway","command":"/bin/gw","args":["mcp"],"env":[{"name":"ACPGW_MCP_SOCKET","value":"/s"},{"name":"T","value":"a=b"}]}]`},
		{"mcp false", true, `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fr frames
			spec := rawSpec()
			spec.NoMCP = tc.noMCP
			p := start(t, spec, agent.Options{Frames: fr.sink})
			if _, err := p.NewSession(t.Context(), t.TempDir(), &recorder{}, srv); err != nil {
				t.Fatalf("NewSession: %v", err)
			}
			fr.mu.Lock()
			defer fr.mu.Unlock()
			found := false
			for _, l := range fr.lines {
				if !strings.Contains(l, `"method":"session/new"`) {
					continue
				}
				found = true
				var msg struct {
					Params struct {
						McpServers json.RawMessage `json:"mcpServers"`
					} `json:"params"`
				}
				if err := json.Unmarshal([]byte(l), &msg); err != nil {
					t.Fatal(err)
				}
				var got, want any
				json.Unmarshal(msg.Params.McpServers, &got)
				json.Unmarshal([]byte(tc.want), &want)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("mcpServers (-want +got):\n%s", diff)
				}
			}
			if !found {
				t.Fatal("no session/new frame")
			}
		})
	}
}

// TestMCPTokenRedactedFromFrames: the frame sink (the event log) gets
// session/new (session/load is the same code) with the value of each env entry the
// server names in SecretEnv replaced by agent.Redacted, and the frame
// otherwise byte for byte as the agent got it; the agent gets the token.
func TestMCPTokenRedactedFromFrames(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	srv := agent.MCPServer{Name: "gateway", Command: "/bin/gw", Args: []string{"mcp"},
		Env: []string{"ACPGW_MCP_SOCKET=/s/" + token[:4], "ACPGW_MCP_TOKEN=" + token, "OTHER=" + token[:8]}, SecretEnv: []string{"ACPGW_MCP_TOKEN"}}
	got := filepath.Join(t.TempDir(), "stdin")
	var fr frames
	p := start(t, rawSpec("RAW_AGENT_STDIN="+got), agent.Options{Frames: fr.sink})
	if _, err := p.NewSession(t.Context(), t.TempDir(), &recorder{}, srv); err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	received, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	var logged []string
	for i, l := range fr.lines {
		if fr.dirs[i] == agent.ToAgent {
			logged = append(logged, l)
		}
	}
	agentGot := strings.Split(strings.TrimSuffix(string(received), "\n"), "\n")
	if len(agentGot) != len(logged) {
		t.Fatalf("the agent got %d lines, the sink %d", len(agentGot), len(logged))
	}
	methods := 0
	for i, l := range agentGot {
		if !strings.Contains(l, `"method":"session/new"`) && !strings.Contains(l, `"method":"session/load"`) {
			if logged[i] != l {
				t.Errorf("frame %d changed:\n got %s\nwant %s", i, logged[i], l)
			}
			continue
		}
		methods++
		if !strings.Contains(l, `"value":"`+token+`"`) {
			t.Errorf("the agent did not get the token: %s", l)
		}
		want := strings.Replace(l, `{"name":"ACPGW_MCP_TOKEN","value":"`+token+`"}`, `{"name":"ACPGW_MCP_TOKEN","value":"`+agent.Redacted+`"}`, 1)
		if want == l {
			t.Fatalf("the test's frame has no token entry: %s", l)
		}
		if logged[i] != want {
			t.Errorf("logged frame\n got %s\nwant %s", logged[i], want)
		}
	}
	if methods != 1 {
		t.Errorf("%d session/new frames, want 1", methods)
	}
}
