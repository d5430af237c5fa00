// Package fakeanthropic is a local stand-in for the Anthropic Messages API,
// enough for Claude Code (inside claude-agent-acp) to run turns offline in
// tests. A script (a func of the request) decides each main-loop answer:
// text, a tool_use, or both. Package claude builds the agent's spec that
// points the real claude-agent-acp at it.
package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// DefaultToolID is the tool_use id of a Reply that names none.
const DefaultToolID = "toolu_fake_1"

// Server logs every request it receives and answers POST /v1/messages from
// its script; everything else gets a harmless answer so the agent never
// waits on it.
type Server struct {
	// URL is the server's base URL (for ANTHROPIC_BASE_URL).
	URL string

	tb     testing.TB
	script func(Request) Reply

	mu    sync.Mutex // guards calls and answered
	calls []Call
	// answered counts the messages answered, for their ids: Claude Code
	// drops an assistant message whose id it has seen already.
	answered int
}

// Call is one request the fake received.
type Call struct {
	Method, Path string
	// Main is true for a main-loop /v1/messages request (one that offers
	// tools); side requests (titles, topic checks) have none.
	Main bool
	Req  Request
}

// Request is the part of a Messages API request body the fake reads.
type Request struct {
	Model     string            `json:"model"`
	Stream    bool              `json:"stream"`
	MaxTokens int               `json:"max_tokens"`
	Messages  []Message         `json:"messages"`
	Tools     []json.RawMessage `json:"tools"`
}

// Message is one conversation turn; content is a string or a list of
// blocks on the wire, always a list here.
type Message struct {
	Role    string
	Content []Block
}

// UnmarshalJSON reads content in either of its wire forms.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	var s string
	if err := json.Unmarshal(raw.Content, &s); err == nil {
		m.Content = []Block{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// Block is one content block of a message.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Name      string          `json:"name,omitempty"`
	ID        string          `json:"id,omitempty"`          // a tool_use's id
	ToolUseID string          `json:"tool_use_id,omitempty"` // a tool_result's tool_use
	Content   json.RawMessage `json:"content,omitempty"`     // a tool_result's content
}

// LastUser returns the last message if it is the user's, else nil.
func (r Request) LastUser() *Message {
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "user" {
		return &r.Messages[n-1]
	}
	return nil
}

// UserText joins the text blocks of the last user message.
func (r Request) UserText() string {
	m := r.LastUser()
	if m == nil {
		return ""
	}
	var parts []string
	for _, b := range m.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolResult returns the last user message's tool_result block, if any.
func (r Request) ToolResult() (Block, bool) {
	if m := r.LastUser(); m != nil {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				return b, true
			}
		}
	}
	return Block{}, false
}

// UserSaid reports whether any user message of the conversation has a
// text block containing s.
func (r Request) UserSaid(s string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if m.Role == "user" && b.Type == "text" && strings.Contains(b.Text, s) {
				return true
			}
		}
	}
	return false
}

// Called reports whether an assistant message of the conversation has a
// tool_use block with id: a script that asks for a tool once checks it, as
// Claude Code sends side requests (such as a suggestion of what to type
// next) that carry the whole conversation with the tools.
func (r Request) Called(id string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if m.Role == "assistant" && b.Type == "tool_use" && b.ID == id {
				return true
			}
		}
	}
	return false
}

// ToolNames returns the names of the tools the request offers, in order.
func (r Request) ToolNames() []string {
	var out []string
	for _, raw := range r.Tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Name != "" {
			out = append(out, t.Name)
		}
	}
	return out
}

// Reply is what the fake answers to one /v1/messages request: text (sent
// as several deltas), then optionally one tool_use block.
type Reply struct {
	// Text is split into Chunks deltas (1 if Chunks is 0).
	Text   string
	Chunks int
	// ToolName and ToolInput, if set, make the reply a tool_use block
	// (stop reason tool_use) after the text, if any. ToolInput is a JSON
	// object, streamed in two input_json_delta parts; ToolID is the
	// block's id (DefaultToolID if empty; a conversation with several
	// tool calls gives each its own).
	ToolName  string
	ToolInput string
	ToolID    string
}

func (rep Reply) toolID() string {
	if rep.ToolID == "" {
		return DefaultToolID
	}
	return rep.ToolID
}

// New starts the fake on a loopback port, answering main-loop requests
// with script. It is closed when the test ends (after cleanups registered
// later, such as stopping the agent, have run).
func New(tb testing.TB, script func(Request) Reply) *Server {
	s := NewHandler(tb, script)
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// NewHandler returns the fake without starting a server (for fuzzing its
// ServeHTTP).
func NewHandler(tb testing.TB, script func(Request) Reply) *Server {
	return &Server{tb: tb, script: script}
}

// MainCalls returns the main-loop requests received so far.
func (f *Server) MainCalls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if c.Main {
			out = append(out, c)
		}
	}
	return out
}

// Paths returns "METHOD path" of every request so far, in arrival order.
func (f *Server) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Method+" "+c.Path)
	}
	return out
}

// ServeHTTP answers one request. It never waits on anything.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		f.tb.Logf("fake anthropic: %s %s: reading body: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	call := Call{Method: r.Method, Path: r.URL.Path}
	var req Request
	if strings.HasPrefix(r.URL.Path, "/v1/messages") && len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			f.tb.Logf("fake anthropic: %s %s: bad JSON: %v", r.Method, r.URL.Path, err)
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		call.Req = req
		call.Main = r.URL.Path == "/v1/messages" && len(req.Tools) > 0
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	if req.Model != "" {
		f.tb.Logf("fake anthropic: %s %s model=%q stream=%v max_tokens=%d messages=%d tools=%d last user=%q",
			r.Method, r.URL.Path, req.Model, req.Stream, req.MaxTokens, len(req.Messages), len(req.Tools), clip(req.UserText(), 120))
	} else {
		f.tb.Logf("fake anthropic: %s %s (%d bytes)", r.Method, r.URL.Path, len(body))
	}

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4+1)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		rep := Reply{Text: "ok"}
		if call.Main {
			rep = f.script(req)
		}
		f.mu.Lock()
		f.answered++
		id := fmt.Sprintf("msg_fake_%d", f.answered)
		f.mu.Unlock()
		if req.Stream {
			writeStream(w, id, req.Model, rep)
		} else {
			writeMessage(w, id, req.Model, rep)
		}
	default:
		http.NotFound(w, r)
	}
}

// writeMessage answers a non-streaming request with one whole message
// whose id is id.
func writeMessage(w http.ResponseWriter, id, model string, rep Reply) {
	content := []map[string]any{}
	stop := "end_turn"
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	if rep.ToolName != "" {
		content = append(content, map[string]any{"type": "tool_use", "id": rep.toolID(), "name": rep.ToolName, "input": json.RawMessage(rep.ToolInput)})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 5},
	})
}

// writeStream answers a streaming request with Server-Sent Events (message
// id id) in the Messages API's order: message_start, per block start/deltas/stop,
// message_delta (stop reason, usage), message_stop.
func writeStream(w http.ResponseWriter, id, model string, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 1},
	}})
	event("ping", map[string]string{"type": "ping"})
	index := 0
	if rep.Text != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]string{"type": "text", "text": ""}})
		for _, part := range splitRunes(rep.Text, rep.Chunks) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]string{"type": "text_delta", "text": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if rep.ToolName != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": rep.toolID(), "name": rep.ToolName, "input": map[string]any{}}})
		for _, part := range splitRunes(rep.ToolInput, 2) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]string{"type": "input_json_delta", "partial_json": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		stop = "tool_use"
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 12}})
	event("message_stop", map[string]string{"type": "message_stop"})
}

// splitRunes cuts s into n pieces of about equal length (at rune boundaries).
func splitRunes(s string, n int) []string {
	r := []rune(s)
	if n < 1 {
		n = 1
	}
	if n > len(r) {
		n = len(r)
	}
	var out []string
	for i := range n {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
