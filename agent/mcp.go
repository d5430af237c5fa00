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
	// Trusted names the server's tools the agent may call without asking
	// the person first: the gateway's own, which the gateway checks itself
	// (see sessionMeta).
	Trusted []string
}

// sessionMeta is the _meta of session/new, session/load and
// session/resume: the tools of servers that need no permission, told
// the way claude-agent-acp reads them (its Claude Code options'
// allowedTools, where an MCP tool is named mcp__<server>__<tool>), so
// that Claude in its default mode does not ask a person to approve each
// send_file of the gateway's own server. ACP reserves _meta for such
// extensions, and an agent ignores the keys it does not know. Nil when
// no tool is trusted, or the agent's Spec turns MCP servers off.
func (p *Process) sessionMeta(servers []MCPServer) map[string]any {
	if p.spec.NoMCP {
		return nil
	}
	var allowed []string
	for _, s := range servers {
		for _, tool := range s.Trusted {
			allowed = append(allowed, "mcp__"+s.Name+"__"+tool)
		}
	}
	if len(allowed) == 0 {
		return nil
	}
	return map[string]any{"claudeCode": map[string]any{"options": map[string]any{"allowedTools": allowed}}}
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
