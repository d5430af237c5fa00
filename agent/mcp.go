package agent

import (
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// MCPServer is a stdio MCP server the agent starts for a session (ACP's
// McpServerStdio, which every agent must accept).
type MCPServer struct {
	// Name identifies the server to the agent ("gateway").
	Name string
	// Command is the absolute path of the program; Args its arguments.
	Command string
	Args    []string
	// Env holds KEY=VALUE entries set for the server.
	Env []string
	// SecretEnv names the entries of Env whose values are secrets (the
	// server's token): the frame sink (the event log) gets Redacted in
	// their place.
	SecretEnv []string
}

// mcpServers converts servers to ACP's form; it is empty (never nil: ACP
// requires the array) when the agent's spec turns them off.
func (p *Process) mcpServers(servers []MCPServer) []acp.McpServer {
	out := []acp.McpServer{}
	if p.spec.NoMCP {
		return out
	}
	for _, s := range servers {
		p.tap.redactEnv(s.SecretEnv)
		env := []acp.EnvVariable{}
		for _, kv := range s.Env {
			k, v, _ := strings.Cut(kv, "=")
			env = append(env, acp.EnvVariable{Name: k, Value: v})
		}
		args := append([]string{}, s.Args...)
		out = append(out, acp.McpServer{Stdio: &acp.McpServerStdio{Name: s.Name, Command: s.Command, Args: args, Env: env}})
	}
	return out
}
