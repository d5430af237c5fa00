package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/claudetest"
	"github.com/acpgw/gateway/internal/fakeanthropic"
	"github.com/acpgw/gateway/internal/sandboxtest"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sandbox"
)

// The prompts the test sends and what the fake model answers.
const (
	helloPrompt = "say hello"
	helloText   = "Hello from the fake model."
	toolPrompt  = "write hi into notes.txt"
	toolFile    = "notes.txt"
	toolID      = "toolu_fake_1"
	toolDone    = "I wrote notes.txt."
)

// claudeTurnTimeout bounds everything one scenario asks of the agent.
const claudeTurnTimeout = 2 * time.Minute

// fakeModel is the fake Messages API's script for the main loop of an agent
// working in cwd: a text answer to helloPrompt; for toolPrompt a Write
// tool_use, then a text once the tool_result comes back.
func fakeModel(cwd string) func(fakeanthropic.Request) fakeanthropic.Reply {
	return func(req fakeanthropic.Request) fakeanthropic.Reply {
		if _, ok := req.ToolResult(); ok {
			return fakeanthropic.Reply{Text: toolDone, Chunks: 2}
		}
		text := req.UserText()
		switch {
		case strings.Contains(text, helloPrompt):
			return fakeanthropic.Reply{Text: helloText, Chunks: 4}
		case strings.Contains(text, toolPrompt):
			path, _ := json.Marshal(filepath.Join(cwd, toolFile))
			return fakeanthropic.Reply{
				Text:      "Writing the file.",
				ToolName:  "Write",
				ToolInput: `{"file_path":` + string(path) + `,"content":"hi\n"}`,
			}
		}
		return fakeanthropic.Reply{Text: "ok"}
	}
}

// claudeRun is one claude-agent-acp process talking to its own fake API.
type claudeRun struct {
	p      *agent.Process
	s      *agent.Session
	h      *claudeHandler
	fake   *fakeanthropic.Server
	frames *frames
	cwd    string
}

// startClaude starts the agent against a fresh fake API, with a temporary
// HOME and working directory, and opens one session. Sandboxed, it runs
// in a sandbox whose network allows the fake API only, its HOME the
// sandbox's home.
func startClaude(t *testing.T, ctx context.Context, sandboxed bool) *claudeRun {
	t.Helper()
	cwd := t.TempDir()
	// Registered before start's cleanup, so the agent stops first.
	fake := fakeanthropic.New(t, fakeModel(cwd))
	spec := claudetest.Spec(t, claudetest.Agent, fake.URL, cwd)
	if sandboxed {
		sandboxtest.Require(t)
		exe, _ := os.Executable()
		u, err := url.Parse(fake.URL)
		if err != nil {
			t.Fatal(err)
		}
		var home string
		for _, kv := range spec.Env {
			if v, ok := strings.CutPrefix(kv, "HOME="); ok {
				home = v
			}
		}
		spec.Sandbox = &sandbox.Spec{Home: home, Exe: exe, Workspace: cwd,
			Network: sandbox.Network{Mode: sandbox.NetAllow, Allow: []string{u.Host}}}
	}
	r := &claudeRun{h: &claudeHandler{}, fake: fake, frames: &frames{}, cwd: cwd}
	log := slog.New(slog.NewTextHandler(claudeLogWriter{t}, nil))
	// The agent ignores stdin EOF; a short grace gets to SIGTERM sooner.
	r.p = start(t, spec, agent.Options{Logger: log, Frames: r.frames.sink, StopGrace: time.Second})
	s, err := r.p.NewSession(ctx, cwd, r.h)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	r.s = s
	return r
}

// claudeHandler records what the agent sends and allows every permission
// request once.
type claudeHandler struct {
	mu          sync.Mutex // guards the fields below
	updates     []projector.Update
	history     int
	permissions []agent.PermissionRequest
}

func (h *claudeHandler) Update(u projector.Update, history bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updates = append(h.updates, u)
	if history {
		h.history++
	}
}

func (h *claudeHandler) Permission(ctx context.Context, r agent.PermissionRequest) (string, bool) {
	h.mu.Lock()
	h.permissions = append(h.permissions, r)
	h.mu.Unlock()
	for _, o := range r.Options {
		if o.Kind == "allow_once" {
			return o.ID, true
		}
	}
	return "", false
}

// snapshot returns copies of what was recorded.
func (h *claudeHandler) snapshot() ([]projector.Update, []agent.PermissionRequest, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.updates), slices.Clone(h.permissions), h.history
}

// textChunks returns the non-empty agent_message_chunk texts among us.
func textChunks(us []projector.Update) []string {
	var out []string
	for _, u := range us {
		if u.Tag == projector.TagAgentMessageChunk && u.Text != "" {
			out = append(out, u.Text)
		}
	}
	return out
}

// wireFrame is the part of a recorded frame the checks read.
type wireFrame struct {
	Dir    agent.Direction
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Params struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			// Content is a block for chunks, a list for tool calls.
			Content json.RawMessage `json:"content"`
		} `json:"update"`
	} `json:"params"`
}

// decoded parses every recorded frame; it fails the test on a frame that
// is not JSON (claude-agent-acp writes only JSON-RPC on stdout).
func (f *frames) decoded(t *testing.T) []wireFrame {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]wireFrame, len(f.lines))
	for i, l := range f.lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			t.Fatalf("frame %d is not JSON: %v: %.200s", i, err, l)
		}
		out[i].Dir = f.dirs[i]
	}
	return out
}

// label names a frame for order checks: "to-agent initialize",
// "from-agent result", "from-agent update", ...
func (w wireFrame) label() string {
	switch {
	case w.Method == "session/update":
		return w.Dir.String() + " update"
	case w.Method != "":
		return w.Dir.String() + " " + w.Method
	case w.Result != nil:
		return w.Dir.String() + " result"
	}
	return w.Dir.String() + " error"
}

// methodOrder lists the labels of the frames that are not updates.
func methodOrder(fs []wireFrame) []string {
	var out []string
	for _, f := range fs {
		if f.Method != "session/update" {
			out = append(out, f.label())
		}
	}
	return out
}

// wireChunks returns the non-empty agent_message_chunk texts in wire order.
func wireChunks(t *testing.T, fs []wireFrame) []string {
	t.Helper()
	var out []string
	for _, f := range fs {
		u := f.Params.Update
		if f.Method != "session/update" || u.SessionUpdate != "agent_message_chunk" {
			continue
		}
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(u.Content, &c); err != nil {
			t.Fatalf("agent_message_chunk content %s: %v", u.Content, err)
		}
		if c.Text != "" {
			out = append(out, c.Text)
		}
	}
	return out
}

func TestClaudeAgent(t *testing.T) {
	claudetest.SkipUnlessEnabled(t)
	t.Run("text", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), claudeTurnTimeout)
		defer cancel()
		r := startClaude(t, ctx, false)
		stop, err := r.s.Prompt(ctx, helloPrompt)
		if err != nil {
			t.Fatalf("Prompt(%q): %v", helloPrompt, err)
		}
		if stop != "end_turn" {
			t.Errorf("stop reason = %q, want end_turn", stop)
		}
		updates, perms, history := r.h.snapshot()
		got := textChunks(updates)
		if text := strings.Join(got, ""); text != helloText {
			t.Errorf("agent_message_chunk text = %q, want %q", text, helloText)
		}
		if len(got) < 2 {
			t.Errorf("got %d text chunks %q, want the fake's deltas streamed as several", len(got), got)
		}
		for _, u := range updates {
			if u.SessionID != r.s.ID {
				t.Errorf("update %s for session %q, want %q", u.RawTag, u.SessionID, r.s.ID)
			}
		}
		if history != 0 || len(perms) != 0 {
			t.Errorf("got %d history updates and %d permission requests, want none", history, len(perms))
		}
		if calls := r.fake.MainCalls(); len(calls) != 1 || !strings.Contains(calls[0].Req.UserText(), helloPrompt) {
			t.Errorf("fake model got %d main-loop requests, want 1 carrying %q", len(calls), helloPrompt)
		}

		fs := r.frames.decoded(t)
		want := []string{
			"to-agent initialize", "from-agent result",
			"to-agent session/new", "from-agent result",
			"to-agent session/prompt", "from-agent result",
		}
		if diff := cmp.Diff(want, methodOrder(fs)); diff != "" {
			t.Errorf("frames other than updates, in order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wireChunks(t, fs), got); diff != "" {
			t.Errorf("handler's text chunks differ from the wire's (-wire +handler):\n%s", diff)
		}
		t.Logf("API requests: %q", r.fake.Paths())
	})

	// In a sandbox too (issue 23): its network allows the fake API only,
	// and the tool's file lands in the workspace on the host.
	for _, sandboxed := range []bool{false, true} {
		name := "tool"
		if sandboxed {
			name = "tool sandboxed"
		}
		t.Run(name, func(t *testing.T) { claudeTool(t, sandboxed) })
	}
}

// claudeTool: a Write the fake model asks for is asked permission for,
// allowed, run, and its result goes back to the model.
func claudeTool(t *testing.T, sandboxed bool) {
	ctx, cancel := context.WithTimeout(t.Context(), claudeTurnTimeout)
	defer cancel()
	r := startClaude(t, ctx, sandboxed)
	stop, err := r.s.Prompt(ctx, toolPrompt)
	if err != nil {
		t.Fatalf("Prompt(%q): %v", toolPrompt, err)
	}
	if stop != "end_turn" {
		t.Errorf("stop reason = %q, want end_turn", stop)
	}
	updates, perms, _ := r.h.snapshot()

	var call, completed bool
	for _, u := range updates {
		switch {
		case u.Tag == projector.TagToolCall && u.Tool.ID == toolID:
			call = true
			if u.Tool.Kind != "edit" {
				t.Errorf("tool_call kind = %q, want edit", u.Tool.Kind)
			}
		case u.Tag == projector.TagToolCallUpdate && u.Tool.ID == toolID && u.Tool.Status == projector.StatusCompleted:
			completed = true
		}
	}
	if !call || !completed {
		t.Errorf("saw tool_call %v and completed tool_call_update %v for %s, want both; tags %v", call, completed, toolID, updateTags(updates))
	}

	if len(perms) != 1 {
		t.Fatalf("got %d permission requests, want 1 for the Write", len(perms))
	}
	pr := perms[0]
	if pr.SessionID != r.s.ID || pr.Tool.ID != toolID {
		t.Errorf("permission request for session %q tool %q, want %q %q", pr.SessionID, pr.Tool.ID, r.s.ID, toolID)
	}
	if !pr.Tool.HasTitle || !strings.Contains(pr.Tool.Title, toolFile) {
		t.Errorf("permission request title = %q (present %v), want one naming %s", pr.Tool.Title, pr.Tool.HasTitle, toolFile)
	}
	if !slices.ContainsFunc(pr.Options, func(o agent.PermissionOption) bool { return o.Kind == "allow_once" && o.ID != "" }) {
		t.Errorf("permission options %+v have no allow_once", pr.Options)
	}

	// The answer reached the agent: the tool ran and its result went back.
	if b, err := os.ReadFile(filepath.Join(r.cwd, toolFile)); err != nil || string(b) != "hi\n" {
		t.Errorf("%s = %q, %v; want %q written by the allowed tool", toolFile, b, err, "hi\n")
	}
	calls := r.fake.MainCalls()
	if len(calls) != 2 {
		t.Fatalf("fake model got %d main-loop requests, want 2 (prompt, tool result)", len(calls))
	}
	if res, ok := calls[1].Req.ToolResult(); !ok || res.ToolUseID != toolID {
		t.Errorf("second request's tool_result = %+v (found %v), want one for %s", res, ok, toolID)
	}
	if text := strings.Join(textChunks(updates), ""); !strings.HasSuffix(text, toolDone) {
		t.Errorf("agent_message_chunk text = %q, want it to end with %q", text, toolDone)
	}

	fs := r.frames.decoded(t)
	want := []string{
		"to-agent initialize", "from-agent result",
		"to-agent session/new", "from-agent result",
		"to-agent session/prompt",
		"from-agent session/request_permission", "to-agent result",
		"from-agent result",
	}
	if diff := cmp.Diff(want, methodOrder(fs)); diff != "" {
		t.Errorf("frames other than updates, in order (-want +got):\n%s", diff)
	}
	t.Logf("API requests: %q", r.fake.Paths())
}

func updateTags(us []projector.Update) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.RawTag)
	}
	return out
}

// claudeLogWriter sends log lines to t.Log.
type claudeLogWriter struct{ t *testing.T }

func (w claudeLogWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}
