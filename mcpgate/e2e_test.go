package mcpgate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/projector"
)

// TestMain lets the test binary be both the demo agent and "gateway mcp",
// as the gateway binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "demo-agent":
			os.Exit(demoagent.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "mcp":
			if err := mcpgate.Serve(context.Background(), os.Getenv(mcpgate.EnvSocket), os.Getenv(mcpgate.EnvToken), os.Stdin, os.Stdout); err != nil {
				os.Stderr.WriteString("mcp: " + err.Error() + "\n")
				os.Exit(2)
			}
			os.Exit(0)
		case "call": // a process that calls send_message with os.Args[2]
			answer, refusal, err := mcpgate.Call(context.Background(), os.Getenv(mcpgate.EnvSocket), os.Getenv(mcpgate.EnvToken), mcpgate.ToolSendMessage, os.Args[2])
			fmt.Printf("answer %q refusal %q err %v\n", answer, refusal, err)
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// replies collects the agent's message text.
type replies struct {
	mu sync.Mutex // guards b
	b  strings.Builder
}

func (r *replies) Update(u projector.Update, history bool) {
	if u.Tag == projector.TagAgentMessageChunk && !history {
		r.mu.Lock()
		r.b.WriteString(u.Text)
		r.mu.Unlock()
	}
}

func (r *replies) Permission(context.Context, agent.PermissionRequest) (string, bool) {
	return "", false
}

func (r *replies) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.b.String()
	r.b.Reset()
	return s
}

// demo is the demo agent in a workspace, given the gateway's MCP server
// for a FakeThread.
type demo struct {
	t    *testing.T
	ws   string
	th   *mcpgate.FakeThread
	srv  *mcpgate.Server
	sess *agent.Session
	r    *replies
}

func startDemo(t *testing.T, max int64, noMCP bool) *demo {
	t.Helper()
	return startDemoIn(t, t.TempDir(), t.TempDir(), "", max, noMCP)
}

// startDemoIn starts the demo agent with its state in state and, with a
// session id, resumes that session with session/load.
func startDemoIn(t *testing.T, ws, state, load string, max int64, noMCP bool) *demo {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	th := &mcpgate.FakeThread{}
	srv, err := mcpgate.Open(mcpgate.Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: ws, MaxFileBytes: max, Command: exe, Logger: testlog.FailOnError(t)}, th)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	spec := agent.Spec{Name: "demo", Command: []string{exe, "demo-agent", "--state-dir", state}, Env: []string{"GORACE=atexit_sleep_ms=0"}, NoMCP: noMCP}
	p, err := agent.Start(t.Context(), spec, agent.Options{Logger: testlog.FailOnSDKError(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Stop(ctx)
	})
	srv.SetAgent(p.Pid())
	r := &replies{}
	var sess *agent.Session
	if load == "" {
		sess, err = p.NewSession(t.Context(), ws, r, srv.MCPServer())
	} else {
		sess, err = p.LoadSession(t.Context(), load, ws, r, srv.MCPServer())
	}
	if err != nil {
		t.Fatal(err)
	}
	return &demo{t: t, ws: ws, th: th, srv: srv, sess: sess, r: r}
}

// say prompts the demo agent and returns its reply.
func (d *demo) say(prompt string) string {
	d.t.Helper()
	if _, err := d.sess.Prompt(d.t.Context(), prompt); err != nil {
		d.t.Fatalf("prompt %q: %v", prompt, err)
	}
	return d.r.take()
}

// TestWriteAndSendFile: the demo agent writes a file in its workspace and
// calls send_file of the gateway mcp subprocess it started; the thread
// gets the file's bytes and name.
func TestWriteAndSendFile(t *testing.T) {
	d := startDemo(t, 1<<20, false)
	reply := d.say("write a file and send it")
	if !strings.Contains(reply, "send_file answered:\nsent demo-report.txt") {
		t.Errorf("reply = %q, want the tool's answer", reply)
	}
	want, err := os.ReadFile(filepath.Join(d.ws, "demo-report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files, msgs, reads := d.th.Calls()
	if len(files) != 1 || len(msgs) != 0 || len(reads) != 0 {
		t.Fatalf("calls: %d files, %d messages, %d reads; want 1 file", len(files), len(msgs), len(reads))
	}
	f := files[0]
	if f.Name != "demo-report.txt" || f.Caption != "the demo report" || string(f.Data) != string(want) {
		t.Errorf("file = %q %q %q, want demo-report.txt, the demo report, %q", f.Name, f.Caption, f.Data, want)
	}
}

// TestReadThread: read_thread returns the thread's messages with authors
// and times, the bot's own marked.
func TestReadThread(t *testing.T) {
	d := startDemo(t, 1<<20, false)
	at := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	d.th.History = []mcpgate.Message{
		{Author: "alice", Time: at, Text: "the build is red"},
		{Author: "gateway", Bot: true, Time: at.Add(time.Minute), Text: "looking"},
	}
	reply := d.say("read the thread")
	want := "read_thread answered:\n[2026-05-01T09:30:00Z] alice: the build is red\n[2026-05-01T09:31:00Z] gateway (this bot): looking\n"
	if diff := cmp.Diff(want, reply); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
	if _, _, reads := d.th.Calls(); !cmp.Equal(reads, []int{mcpgate.DefaultReadLimit}) {
		t.Errorf("reads = %v, want [%d]", reads, mcpgate.DefaultReadLimit)
	}
}

// TestSendFileRefusals: send_file refuses what is not a regular file inside
// the workspace within the size limit, says why, and sends nothing.
func TestSendFileRefusals(t *testing.T) {
	d := startDemo(t, 64, false)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(filepath.Dir(d.ws), "dotdot.txt"), []byte("x"), 0o600))
	must(os.Symlink(outside, filepath.Join(d.ws, "link.txt")))
	must(os.Symlink("/dev/zero", filepath.Join(d.ws, "zero")))
	must(os.WriteFile(filepath.Join(d.ws, "big.bin"), make([]byte, 65), 0o600))
	must(os.WriteFile(filepath.Join(d.ws, "ok.txt"), make([]byte, 64), 0o600))
	must(os.Mkdir(filepath.Join(d.ws, "sub"), 0o700))
	must(syscall.Mkfifo(filepath.Join(d.ws, "pipe"), 0o600))
	for _, tc := range []struct{ name, path, why string }{
		{"outside", outside, "is outside the workspace"},
		{"dotdot", "../dotdot.txt", "is outside the workspace"},
		{"symlink out", "link.txt", "is outside the workspace"},
		{"device", "/dev/zero", "is outside the workspace"},
		{"symlink to a device", "zero", "is outside the workspace"},
		{"oversized", "big.bin", "is 65 bytes, more than the 64 bytes"},
		{"directory", "sub", "is not a regular file (a directory)"},
		{"fifo", "pipe", "is not a regular file (a fifo)"},
		{"missing", "nope.txt", "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply := d.say("send " + tc.path)
			if !strings.HasPrefix(reply, "send_file was refused: ") || !strings.Contains(reply, tc.why) {
				t.Errorf("reply = %q, want a refusal saying %q", reply, tc.why)
			}
		})
	}
	if files, _, _ := d.th.Calls(); len(files) != 0 {
		t.Fatalf("refused files reached the thread: %d", len(files))
	}
	// The limit is inclusive, and a relative path is the workspace's.
	if reply := d.say("send ok.txt"); !strings.Contains(reply, "sent ok.txt (64 bytes)") {
		t.Errorf("reply = %q, want ok.txt sent", reply)
	}
	if files, _, _ := d.th.Calls(); len(files) != 1 || files[0].Name != "ok.txt" || len(files[0].Data) != 64 {
		t.Errorf("files = %+v, want ok.txt", files)
	}
}

// TestNoMCP: with agents.list.NAME.mcp false the agent gets no MCP server.
func TestNoMCP(t *testing.T) {
	d := startDemo(t, 1<<20, true)
	reply := d.say("write a file and send it")
	if !strings.Contains(reply, "none of the 0 MCP servers I was given offers send_file") {
		t.Errorf("reply = %q", reply)
	}
	if files, _, _ := d.th.Calls(); len(files) != 0 {
		t.Errorf("files = %d, want none", len(files))
	}
}

// TestLoadSessionGetsMCP: a session resumed with session/load gets the
// MCP server too (a new socket and token, as after a gateway restart).
func TestLoadSessionGetsMCP(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	first := startDemoIn(t, ws, state, "", 1<<20, false)
	first.say("echo hello")
	d := startDemoIn(t, ws, state, first.sess.ID, 1<<20, false)
	d.th.History = []mcpgate.Message{{Author: "bob", Time: time.Unix(0, 0), Text: "hi"}}
	if reply := d.say("read the thread"); !strings.Contains(reply, "bob: hi") {
		t.Errorf("reply = %q, want bob's message", reply)
	}
	if _, _, reads := first.th.Calls(); len(reads) != 0 {
		t.Errorf("the first session's thread was read: %v", reads)
	}
}
