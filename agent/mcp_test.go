package agent_test

import (
	"encoding/json"
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
