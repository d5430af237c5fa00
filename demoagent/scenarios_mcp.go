package demoagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reportName is the file the write scenario writes and sends.
const reportName = "demo-report.txt"

// callTool starts each stdio MCP server the session was given, in turn,
// until one offers tool, and calls it with args. It returns the tool's
// text and whether the tool reported an error; err is for a failure to
// reach any server that offers the tool.
func (t *turn) callTool(tool string, args map[string]any) (text string, isError bool, err error) {
	var errs []error
	for _, srv := range t.mcp {
		if srv.Stdio == nil {
			continue
		}
		text, isError, err := callStdio(t.ctx, *srv.Stdio, t.cwd, tool, args)
		if errors.Is(err, errNoTool) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("MCP server %q: %w", srv.Stdio.Name, err))
			continue
		}
		return text, isError, nil
	}
	if len(errs) > 0 {
		return "", false, errors.Join(errs...)
	}
	return "", false, fmt.Errorf("none of the %d MCP servers I was given offers %s", len(t.mcp), tool)
}

var errNoTool = errors.New("no such tool")

// callStdio runs one stdio MCP server (with the MCP Go SDK's client), calls
// tool if it offers it, and stops the server.
func callStdio(ctx context.Context, srv acp.McpServerStdio, cwd, tool string, args map[string]any) (string, bool, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for _, e := range srv.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	if st, err := os.Stat(cwd); err == nil && st.IsDir() {
		cmd.Dir = cwd
	}
	cmd.Stderr = os.Stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "acp-demo-agent", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return "", false, fmt.Errorf("start: %w", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return "", false, fmt.Errorf("tools/list: %w", err)
	}
	found := false
	for _, tl := range tools.Tools {
		found = found || tl.Name == tool
	}
	if !found {
		return "", false, errNoTool
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, fmt.Errorf("tools/call %s: %w", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

// sayTool says how a tool call went.
func (t *turn) sayTool(tool, text string, isError bool, err error) (acp.StopReason, error) {
	var msg string
	switch {
	case err != nil:
		msg = fmt.Sprintf("I could not call %s: %v", tool, err)
	case isError:
		msg = fmt.Sprintf("%s was refused: %s", tool, text)
	default:
		msg = fmt.Sprintf("%s answered:\n%s", tool, text)
	}
	if err := t.say(msg); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}

func runWriteAndSend(t *turn, _ string) (acp.StopReason, error) {
	path := filepath.Join(t.cwd, reportName)
	body := fmt.Sprintf("Demo report\nsession %s, turn %d\n", t.id, t.seq)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		if err := t.say(fmt.Sprintf("I could not write %s: %v", path, err)); err != nil {
			return "", err
		}
		return acp.StopReasonEndTurn, nil
	}
	if err := t.say(fmt.Sprintf("I wrote %s (%d bytes). ", reportName, len(body))); err != nil {
		return "", err
	}
	text, isError, err := t.callTool("send_file", map[string]any{"path": path, "caption": "the demo report"})
	return t.sayTool("send_file", text, isError, err)
}

func runSendPath(t *turn, arg string) (acp.StopReason, error) {
	if arg == "" {
		return badArg(t, "send", errors.New("give a path"))
	}
	text, isError, err := t.callTool("send_file", map[string]any{"path": arg})
	return t.sayTool("send_file", text, isError, err)
}

func runReadThread(t *turn, _ string) (acp.StopReason, error) {
	text, isError, err := t.callTool("read_thread", map[string]any{})
	return t.sayTool("read_thread", text, isError, err)
}

func runAskTool(t *turn, arg string) (acp.StopReason, error) {
	args := map[string]any{"question": "Which color should the button be?", "options": []string{"red", "green", "blue"}}
	if arg == "text" {
		args = map[string]any{"question": "What should the release be called?"}
	}
	text, isError, err := t.callTool("ask", args)
	return t.sayTool("ask", text, isError, err)
}

func runSendMessage(t *turn, arg string) (acp.StopReason, error) {
	if arg == "" {
		return badArg(t, "message", errors.New("give the text to send"))
	}
	if err := t.say("Before the message. "); err != nil {
		return "", err
	}
	text, isError, err := t.callTool("send_message", map[string]any{"text": arg})
	if err != nil || isError {
		return t.sayTool("send_message", text, isError, err)
	}
	if err := t.say("After the message."); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}
