package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/projector"
)

// fileThread records the files send_file delivers.
type fileThread struct {
	mu    sync.Mutex // guards files
	files []mcpgate.File
}

func (f *fileThread) SendFile(_ context.Context, file mcpgate.File) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files = append(f.files, file)
	file.Release()
	return false, nil
}
func (f *fileThread) SendMessage(context.Context, string) error { return nil }
func (f *fileThread) ReadThread(context.Context, int) ([]mcpgate.Message, error) {
	return nil, nil
}
func (f *fileThread) Ask(context.Context, string, []string) (mcpgate.Answer, error) {
	return mcpgate.Answer{}, nil
}

// textHandler collects the agent's text.
type textHandler struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (h *textHandler) Update(u projector.Update, _ bool) {
	if u.Tag == projector.TagAgentMessageChunk {
		h.mu.Lock()
		h.b.WriteString(u.Text)
		h.mu.Unlock()
	}
}
func (h *textHandler) Permission(context.Context, agent.PermissionRequest) (string, bool) {
	return "", false
}

// TestMCPSubcommand: the demo agent starts "gateway mcp" (this binary) as
// the MCP server it was given, and the file it writes reaches the thread.
func TestMCPSubcommand(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	th := &fileThread{}
	srv, err := mcpgate.Open(mcpgate.Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: ws, MaxFileBytes: 1 << 20, Command: exe, Logger: testlog.FailOnError(t)}, th)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := agent.Start(t.Context(), agent.Spec{Name: "demo", Command: []string{exe, "demo-agent", "--state-dir", t.TempDir()}}, agent.Options{Logger: testlog.FailOnSDKError(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Stop(ctx)
	}()
	srv.SetAgent(p.Pid())
	h := &textHandler{}
	sess, err := p.NewSession(t.Context(), ws, h, srv.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Prompt(t.Context(), "write a file and send it"); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	reply := h.b.String()
	h.mu.Unlock()
	if !strings.Contains(reply, "sent demo-report.txt") {
		t.Errorf("reply = %q", reply)
	}
	th.mu.Lock()
	defer th.mu.Unlock()
	if len(th.files) != 1 || th.files[0].Name != "demo-report.txt" || !strings.HasPrefix(string(th.files[0].Data), "Demo report\n") {
		t.Errorf("files = %+v, want demo-report.txt", th.files)
	}
}

// TestMCPSubcommandErrors: without the environment the gateway gives it,
// or with arguments, "gateway mcp" fails and says why.
func TestMCPSubcommandErrors(t *testing.T) {
	t.Setenv(mcpgate.EnvSocket, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp"}, mcpgate.EnvSocket},
		{[]string{"mcp", "x"}, "mcp takes no arguments"},
	} {
		_, _, err := runCLI(t, "", tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
