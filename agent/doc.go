// Package agent is the gateway's side of the Agent Client Protocol: it
// starts an agent process in its own process group and talks JSON-RPC to
// it over its stdio through a line tap, with the types of
// github.com/coder/acp-go-sdk (not its Connection, whose reader holds
// 1 MiB per connection: the tap reads with 8 KiB between lines).
//
// The tap sees every JSON-RPC line of both directions in wire order. It
// hands each line to a FrameSink (the raw event log) unchanged — except
// the MCP servers' tokens in session/new and session/load, which the
// sink gets as Redacted (MCPServer.SecretEnv) — decodes
// session/update notifications itself with acpwire — the decoder `gateway
// replay` uses, routed by the raw sessionUpdate tag, so tags the SDK does
// not know are never mis-decoded by shape — and matches the answers to
// the requests it sent, answers the agent's requests (rpc.go, client.go,
// elicit.go). Updates never queue: they go straight to the session's
// Handler, which must not block. A malformed line is logged and skipped;
// a line longer than MaxLine is logged and discarded without being
// buffered; neither closes the connection.
//
// One Process usually serves one Session (one chat thread); updates that
// arrive for a session id before session/new has returned are buffered and
// handed over when the Session is registered.
package agent
