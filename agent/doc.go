// Package agent is the gateway's side of the Agent Client Protocol: it
// starts an agent process in its own process group, talks to it through
// github.com/coder/acp-go-sdk, and sits a line tap between the two.
//
// The tap sees every JSON-RPC line of both directions in wire order. It
// hands each line to a FrameSink (the raw event log) unchanged — except
// the MCP servers' tokens in session/new and session/load, which the
// sink gets as Redacted (MCPServer.SecretEnv) — decodes
// session/update notifications itself with acpwire — the decoder `gateway
// replay` uses, routed by the raw sessionUpdate tag, so tags the SDK does
// not know are never mis-decoded by shape — and passes every other line to
// the SDK. Updates therefore never queue inside the SDK (whose notification
// queue closes the connection when 1,024 back up): they go straight to the
// session's Handler, which must not block. A line longer than the SDK's
// 10 MiB scanner limit is logged and not forwarded, so it cannot close the
// connection.
//
// One Process usually serves one Session (one chat thread); updates that
// arrive for a session id before session/new has returned are buffered and
// handed over when the Session is registered.
package agent
