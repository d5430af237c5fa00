package agent

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRedactMCP: redaction never panics, keeps a valid frame valid JSON,
// and leaves no secret entry's value in a frame that spells mcpServers as
// the SDK does.
func FuzzRedactMCP(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"gateway","command":"/gw","args":["mcp"],"env":[{"name":"S","value":"/s"},{"name":"T","value":"tok\u003c"}]}]}}`))
	f.Add([]byte(`{"params":{"mcpServers":[{"env":[{"name":"T","value":"\"x\\"}]}]}}`))
	f.Add([]byte(`{"params":{"mcpServers":null}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		out := redactMCP(line, []string{"T"})
		if !json.Valid(line) || !bytes.Contains(line, mcpMarker) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("redacted %s into invalid JSON %s", line, out)
		}
		var f struct {
			Params struct {
				MCPServers []struct {
					Env []struct{ Name, Value string }
				} `json:"mcpServers"`
			} `json:"params"`
		}
		if json.Unmarshal(out, &f) != nil {
			return
		}
		for _, s := range f.Params.MCPServers {
			for _, e := range s.Env {
				if e.Name == "T" && e.Value != "" && e.Value != Redacted {
					t.Fatalf("the secret entry is %q after redaction of %s", e.Value, line)
				}
			}
		}
	})
}
