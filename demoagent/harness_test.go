package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgw/gateway/internal/testlog"
)

// harness runs Run in-process and talks to it through the SDK's client side
// over io.Pipes, with a tap that records every line the agent writes.
//
// The tap hands session/update notifications to the client itself, in wire
// order on the agent's writing goroutine, and passes only the other lines
// to the SDK: the SDK queues at most 1,024 notifications and closes the
// connection when a burst outruns its handler, which a loaded machine makes
// happen at random. Going through the tap, a burst is held back by the
// pipe instead.
type harness struct {
	t      *testing.T
	conn   *acp.ClientSideConnection
	client *fakeClient
	tap    *tap
	toA    *io.PipeWriter // the agent's stdin, client side
	fromA  *io.PipeWriter // the agent's stdout
	fromR  *io.PipeReader // the agent's stdout, client side
	runErr chan error
	rawID  int
}

// start runs an agent with o. The caller must call stop (or wait for Run
// to return and then call stop) before the synctest bubble ends.
func start(t *testing.T, o Options) *harness {
	t.Helper()
	if o.StateDir == "" {
		o.StateDir = t.TempDir()
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{t: t, client: &fakeClient{}, toA: inW, fromA: outW, fromR: outR, runErr: make(chan error, 1)}
	h.tap = &tap{t: t, w: outW, updates: h.client}
	go func() { h.runErr <- Run(t.Context(), inR, h.tap, o) }()
	h.conn = acp.NewClientSideConnection(h.client, inW, outR)
	h.conn.SetLogger(testlog.FailOnError(t))
	return h
}

// stop closes the agent's stdin, waits for Run and returns its error.
func (h *harness) stop() error {
	h.toA.Close()
	h.unblock()
	err := <-h.runErr
	h.fromA.Close()
	<-h.conn.Done()
	return err
}

// unblock lets the agent's writes fail if the SDK connection has died (a
// failed test), so that Run can return instead of writing to no reader.
func (h *harness) unblock() {
	select {
	case <-h.conn.Done():
		h.fromR.CloseWithError(errors.New("the client connection is closed"))
	default:
	}
}

// wait waits for Run to return on its own (crash) and then shuts down.
func (h *harness) wait() error {
	err := <-h.runErr
	h.toA.Close()
	h.fromA.Close()
	<-h.conn.Done()
	return err
}

func (h *harness) initialize() acp.InitializeResponse {
	h.t.Helper()
	resp, err := h.conn.Initialize(h.t.Context(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	if err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	return resp
}

func (h *harness) newSession() acp.SessionId {
	h.t.Helper()
	resp, err := h.conn.NewSession(h.t.Context(), acp.NewSessionRequest{Cwd: "/work/demo", McpServers: []acp.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

func (h *harness) prompt(id acp.SessionId, text string) (acp.PromptResponse, error) {
	return h.conn.Prompt(h.t.Context(), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
}

// rawCall writes a request the SDK's typed client cannot express and
// returns the agent's error answer, if any. The SDK client drops the
// response because it did not send the request.
func (h *harness) rawCall(method string, params json.RawMessage) error {
	h.t.Helper()
	h.rawID++
	id := fmt.Sprintf(`"raw-%d"`, h.rawID)
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params)
	if _, err := io.WriteString(h.toA, line); err != nil {
		h.t.Fatalf("write %s: %v", method, err)
	}
	synctest.Wait()
	for _, f := range h.tap.frames(h.t) {
		if string(f.ID) == id && f.Method == "" {
			if f.Error != nil {
				return f.Error
			}
			return nil
		}
	}
	h.t.Fatalf("no answer to %s", method)
	return nil
}

// fakeClient is an ACP client that records updates and answers permission
// requests with permit (or cancelled when permit is nil).
type fakeClient struct {
	mu      sync.Mutex // guards the fields below
	updates []acp.SessionNotification
	asks    []acp.RequestPermissionRequest
	permit  func(acp.RequestPermissionRequest) acp.RequestPermissionResponse
}

func (c *fakeClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *fakeClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asks = append(c.asks, p)
	permit := c.permit
	c.mu.Unlock()
	if permit == nil {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return permit(p), nil
}

func (c *fakeClient) setPermit(f func(acp.RequestPermissionRequest) acp.RequestPermissionResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.permit = f
}

func (c *fakeClient) received() []acp.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.SessionNotification(nil), c.updates...)
}

func (c *fakeClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *fakeClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (c *fakeClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *fakeClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *fakeClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *fakeClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *fakeClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// tap records the agent's output, one entry per line, and forwards it line
// by line: a session/update to updates (when set), anything else to w.
type tap struct {
	t       *testing.T
	w       io.Writer
	updates acp.Client // nil: updates go to w too

	mu    sync.Mutex // guards the fields below
	lines [][]byte
	part  []byte
}

// Write is called by the agent's one writer. The lock is not held while
// forwarding: a reader that stopped must not block frames.
func (p *tap) Write(b []byte) (int, error) {
	var whole [][]byte
	p.mu.Lock()
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(nil), p.part[:i+1]...)
		p.part = p.part[i+1:]
		p.lines = append(p.lines, line[:i])
		whole = append(whole, line)
	}
	p.mu.Unlock()
	for _, line := range whole {
		if p.update(line) {
			continue
		}
		if _, err := p.w.Write(line); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// update hands line to p.updates if it is a session/update notification,
// decoded and checked as the SDK would, and reports whether it did.
func (p *tap) update(line []byte) bool {
	if p.updates == nil {
		return false
	}
	var m struct {
		ID     json.RawMessage          `json:"id"`
		Method string                   `json:"method"`
		Params *acp.SessionNotification `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID != nil || m.Method != acp.ClientMethodSessionUpdate {
		return false
	}
	if m.Params == nil {
		p.t.Errorf("session/update without params: %s", line)
		return true
	}
	if err := m.Params.Validate(); err != nil {
		p.t.Errorf("invalid session/update: %v: %s", err, line)
		return true
	}
	if err := p.updates.SessionUpdate(context.Background(), *m.Params); err != nil {
		p.t.Errorf("session/update: %v", err)
	}
	return true
}

// frame is a decoded line from the tap.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *acp.RequestError
}

func (p *tap) frames(t *testing.T) []frame {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]frame, len(p.lines))
	for i, l := range p.lines {
		if err := json.Unmarshal(l, &out[i]); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, l)
		}
	}
	return out
}

// wireUpdate is the part of a session/update this package's tests look at.
type wireUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
	ToolCallID    string          `json:"toolCallId"`
	Title         *string         `json:"title"`
	Status        *string         `json:"status"`
	Entries       []struct {
		Status string `json:"status"`
	} `json:"entries"`
	Used      *int            `json:"used"`
	Size      *int            `json:"size"`
	RawInput  json.RawMessage `json:"rawInput"`
	Locations []struct {
		Path string `json:"path"`
		Line *int   `json:"line"`
	} `json:"locations"`
}

// step is one agent-to-client frame of a session, in a form tests compare.
type step struct {
	session string
	desc    string // a short description, see describe
	text    string // chunk text, for message and thought chunks
}

// steps decodes the session/update and session/request_permission frames.
func steps(t *testing.T, fs []frame) []step {
	t.Helper()
	var out []step
	for _, f := range fs {
		var p struct {
			SessionID string             `json:"sessionId"`
			Update    wireUpdate         `json:"update"`
			ToolCall  acp.ToolCallUpdate `json:"toolCall"`
		}
		switch f.Method {
		case acp.ClientMethodSessionUpdate, acp.ClientMethodSessionRequestPermission:
		default:
			continue
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Fatalf("bad %s params: %v", f.Method, err)
		}
		if f.Method == acp.ClientMethodSessionRequestPermission {
			out = append(out, step{session: p.SessionID, desc: "permission " + string(p.ToolCall.ToolCallId)})
			continue
		}
		s := step{session: p.SessionID, desc: describe(p.Update)}
		if strings.HasSuffix(p.Update.SessionUpdate, "_chunk") {
			var c struct{ Text string }
			if err := json.Unmarshal(p.Update.Content, &c); err != nil {
				t.Fatalf("bad chunk content: %v", err)
			}
			s.text = c.Text
		}
		out = append(out, s)
	}
	return out
}

// describe renders an update as a short line: the tag and what matters.
func describe(u wireUpdate) string {
	opt := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	switch u.SessionUpdate {
	case "agent_message_chunk":
		return "text"
	case "agent_thought_chunk":
		return "thought"
	case "user_message_chunk":
		return "user"
	case "tool_call", "tool_call_update":
		return fmt.Sprintf("%s %s %s %s", u.SessionUpdate, u.ToolCallID, opt(u.Status), opt(u.Title))
	case "plan":
		var st []string
		for _, e := range u.Entries {
			st = append(st, e.Status)
		}
		return "plan " + strings.Join(st, ",")
	case "usage_update":
		return fmt.Sprintf("usage %d/%d", *u.Used, *u.Size)
	case "session_info_update":
		return "info " + opt(u.Title)
	default:
		return u.SessionUpdate
	}
}

// squash joins runs of equal descriptions of text chunks into one, so a
// test can state the shape of a turn without counting chunks.
func squash(ss []step) []string {
	var out []string
	for _, s := range ss {
		if n := len(out); n > 0 && out[n-1] == s.desc && (s.desc == "text" || s.desc == "thought") {
			continue
		}
		out = append(out, s.desc)
	}
	return out
}

// text concatenates the agent_message_chunk texts.
func text(ss []step) string {
	var b strings.Builder
	for _, s := range ss {
		if s.desc == "text" {
			b.WriteString(s.text)
		}
	}
	return b.String()
}
