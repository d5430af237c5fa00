package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the MCP server's version as it reports it.
const Version = "1"

// sendFileArgs and the others are the tools' inputs; the SDK derives their
// JSON schemas from the struct tags.
type sendFileArgs struct {
	Path    string `json:"path" jsonschema:"the file to send: a path inside the thread's workspace (relative to it, or absolute)"`
	Caption string `json:"caption,omitempty" jsonschema:"a caption posted with the file"`
}

type sendMessageArgs struct {
	Text string `json:"text" jsonschema:"the message to post in the chat thread"`
}

type readThreadArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"how many recent messages to return (default 20, at most 100)"`
}

type askArgs struct {
	Question string   `json:"question" jsonschema:"the question to ask the people of the chat thread"`
	Options  []string `json:"options,omitempty" jsonschema:"the answers to pick one of (shown as buttons or a menu); none: the person types the answer"`
}

// Serve runs the MCP half: an MCP server on in/out whose tools forward
// to the gateway half at socket, presenting token. It returns when the
// client closes the connection or ctx ends.
func Serve(ctx context.Context, socket, token string, in io.ReadCloser, out io.WriteCloser) error {
	if socket == "" || token == "" {
		return fmt.Errorf("mcp: %s and %s must be set (the gateway sets them for the agent)", EnvSocket, EnvToken)
	}
	c := client{socket: socket, token: token}
	s := mcp.NewServer(&mcp.Implementation{Name: "gateway", Version: Version}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolSendFile,
		Description: "Post a file from your workspace into the chat thread you are working for (a screenshot, a report, a patch). Only regular files inside the workspace, within the platform's size limit.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a sendFileArgs) (*mcp.CallToolResult, any, error) {
		return c.result(ctx, request{Tool: ToolSendFile, Path: a.Path, Caption: a.Caption})
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolSendMessage,
		Description: "Post a message into the chat thread you are working for, right away. Only while your turn runs (while you answer a message): after your turn has ended it is refused and nothing is posted; say it in your reply to the next message instead.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a sendMessageArgs) (*mcp.CallToolResult, any, error) {
		return c.result(ctx, request{Tool: ToolSendMessage, Text: a.Text})
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolReadThread,
		Description: "Read the recent messages of the chat thread you are working for, oldest first, with their authors and times.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a readThreadArgs) (*mcp.CallToolResult, any, error) {
		return c.result(ctx, request{Tool: ToolReadThread, Limit: a.Limit})
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolAsk,
		Description: "Ask the person who started this turn a question in the chat thread and wait for the answer: with options, they pick one; without, they type it. The result starts with \"answer: \" and the answer, or says the question was declined or cancelled (stopped, or nobody answered in time). Only while your turn runs: after it has ended the tool is refused.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a askArgs) (*mcp.CallToolResult, any, error) {
		return c.result(ctx, request{Tool: ToolAsk, Question: a.Question, Options: a.Options})
	})
	err := s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// client calls the gateway half.
type client struct {
	socket, token string
}

// result makes the call and turns its answer into the tool's result; a
// refusal is a tool error the agent reads, not a protocol error.
func (c client) result(ctx context.Context, req request) (*mcp.CallToolResult, any, error) {
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if resp.Error != "" {
		return nil, nil, errors.New(resp.Error)
	}
	text := resp.Text
	if req.Tool == ToolReadThread {
		text = formatMessages(resp.Messages)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

func (c client) call(ctx context.Context, req request) (response, error) {
	req.Token = c.token
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		return response{}, fmt.Errorf("the gateway is not reachable: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if err := writeLine(conn, req); err != nil {
		return response{}, fmt.Errorf("the gateway is not reachable: %w", err)
	}
	line, err := readLine(conn, maxResponseBytes)
	if err != nil {
		return response{}, fmt.Errorf("no answer from the gateway: %w", err)
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return response{}, fmt.Errorf("bad answer from the gateway: %w", err)
	}
	return resp, nil
}

// formatMessages renders read_thread's messages for the agent, one per
// line block: "[time] author: text".
func formatMessages(msgs []Message) string {
	if len(msgs) == 0 {
		return "The thread has no messages."
	}
	var b strings.Builder
	for _, m := range msgs {
		who := m.Author
		if m.Bot {
			who += " (this bot)"
		}
		fmt.Fprintf(&b, "[%s] %s: %s\n", m.Time.UTC().Format(time.RFC3339), who, m.Text)
	}
	return b.String()
}
