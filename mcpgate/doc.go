// Package mcpgate gives an agent's session a gateway-owned MCP server with
// tools that act on the session's chat thread: send_file, send_message and
// read_thread.
//
// It has two halves joined by a per-session unix socket. The gateway half
// (Open, Server) listens on the socket, authenticates each call with a
// random token, checks its arguments (a file must be a regular file inside
// the thread's workspace, within a size limit) and calls the session's
// Thread. The MCP half (Main, run as "gateway mcp" by the agent) speaks
// MCP over stdio with the official MCP Go SDK and forwards each tool call
// over the socket; it holds no platform token and decides nothing.
package mcpgate
