package agent

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Redacted replaces, in the frames a FrameSink is given, the value of each
// mcpServers[].env entry that an MCPServer names in SecretEnv (the MCP
// server's token): the event log never holds it, and the value says why
// it is missing. It is the one exception to "the log holds every frame
// unchanged"; the agent itself gets the frame as it is.
const Redacted = "[redacted by the gateway]"

// mcpMarker is how a frame that may hold MCP servers' env is recognized
// before it is decoded.
var mcpMarker = []byte(`"mcpServers"`)

// redactMCP returns line with the values of the env entries of
// params.mcpServers named in secret replaced by Redacted. A frame the SDK
// wrote (encoding/json: {"name":N,"value":V}) is otherwise kept byte for
// byte; one written some other way is encoded again. It returns line
// itself when there is nothing to redact.
func redactMCP(line []byte, secret []string) []byte {
	if len(secret) == 0 || !bytes.Contains(line, mcpMarker) {
		return line
	}
	var f struct {
		Params struct {
			MCPServers []struct {
				Env []struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"env"`
			} `json:"mcpServers"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &f) != nil {
		return line
	}
	out := line
	for _, s := range f.Params.MCPServers {
		for _, e := range s.Env {
			if e.Value == Redacted || !slices.Contains(secret, e.Name) {
				continue
			}
			was, _ := json.Marshal(envEntry{e.Name, e.Value})
			now, _ := json.Marshal(envEntry{e.Name, Redacted})
			if !bytes.Contains(out, was) {
				return reencodeRedacted(line, secret)
			}
			out = bytes.ReplaceAll(out, was, now)
		}
	}
	return out
}

// envEntry is an env entry as the SDK encodes it.
type envEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// reencodeRedacted decodes line, replaces the secret values and encodes
// it again (keys sorted, numbers as they were).
func reencodeRedacted(line []byte, secret []string) []byte {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return line
	}
	for _, srv := range jsonList(v, "params", "mcpServers") {
		for _, e := range jsonList(srv, "env") {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			for k, name := range m {
				if n, ok := name.(string); ok && strings.EqualFold(k, "name") && slices.Contains(secret, n) {
					for k2 := range m {
						if strings.EqualFold(k2, "value") {
							m[k2] = Redacted
						}
					}
				}
			}
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return line
	}
	return out
}

// jsonList follows keys (matched as encoding/json does, ignoring case) from
// v and returns the list found there.
func jsonList(v any, keys ...string) []any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = nil
		for mk, mv := range m {
			if mk == k {
				v = mv
				break
			}
			if strings.EqualFold(mk, k) {
				v = mv
			}
		}
	}
	l, _ := v.([]any)
	return l
}
