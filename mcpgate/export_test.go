package mcpgate

import "context"

// Call makes one socket call as the MCP half does, with the given token.
func Call(ctx context.Context, socket, token, tool, text string) (answer, refusal string, err error) {
	resp, err := client{socket: socket, token: token}.call(ctx, request{Tool: tool, Text: text})
	return resp.Text, resp.Error, err
}

// Token returns the server's token.
func (s *Server) Token() string { return s.token }

// CallFile makes one send_file call over the socket, as the MCP half does.
func CallFile(ctx context.Context, socket, token, path string) (answer, refusal string, err error) {
	resp, err := client{socket: socket, token: token}.call(ctx, request{Tool: ToolSendFile, Path: path})
	return resp.Text, resp.Error, err
}
