package agent_test

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

// fakeAnthropic is a local stand-in for the Anthropic Messages API, enough
// for Claude Code (inside claude-agent-acp) to run a turn offline. It logs
// every request and answers POST /v1/messages from reply; everything else
// gets a harmless answer so the agent never waits on it.
type fakeAnthropic struct {
	t     *testing.T
	reply func(req messagesRequest) fakeReply

	mu    sync.Mutex // guards calls
	calls []fakeCall
}

// fakeCall is one request the fake received.
type fakeCall struct {
	Method, Path string
	// Main is true for a main-loop /v1/messages request (one that offers
	// tools); side requests (titles, topic checks) have none.
	Main bool
	Req  messagesRequest
}

// messagesRequest is the part of a Messages API request body the fake reads.
type messagesRequest struct {
	Model     string            `json:"model"`
	Stream    bool              `json:"stream"`
	MaxTokens int               `json:"max_tokens"`
	Messages  []apiMessage      `json:"messages"`
	Tools     []json.RawMessage `json:"tools"`
}

// apiMessage is one conversation turn; content is a string or a list of
// blocks on the wire, always a list here.
type apiMessage struct {
	Role    string
	Content []apiBlock
}

func (m *apiMessage) UnmarshalJSON(b []byte) error {
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
		m.Content = []apiBlock{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// apiBlock is one content block of a message.
type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Name      string          `json:"name,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // a tool_result's content
}

// lastUser returns the last message if it is the user's, else nil.
func (r messagesRequest) lastUser() *apiMessage {
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "user" {
		return &r.Messages[n-1]
	}
	return nil
}

// userText joins the text blocks of the last user message.
func (r messagesRequest) userText() string {
	m := r.lastUser()
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

// toolResult returns the last user message's tool_result block, if any.
func (r messagesRequest) toolResult() (apiBlock, bool) {
	if m := r.lastUser(); m != nil {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				return b, true
			}
		}
	}
	return apiBlock{}, false
}

// fakeReply is what the fake answers to one /v1/messages request: either
// text (sent as several deltas) or one tool_use block.
type fakeReply struct {
	// Text is split into Chunks deltas (1 if Chunks is 0).
	Text   string
	Chunks int
	// ToolName and ToolInput, if set, make the reply a tool_use block
	// (stop reason tool_use) after the text, if any.
	ToolName  string
	ToolInput string // JSON object, streamed in two input_json_delta parts
}

// newFakeAnthropic starts the fake on a loopback port. It is closed when
// the test ends (after cleanups registered later, such as stopping the
// agent, have run).
func newFakeAnthropic(t *testing.T, reply func(messagesRequest) fakeReply) (*fakeAnthropic, *httptest.Server) {
	f := &fakeAnthropic{t: t, reply: reply}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// mainCalls returns the main-loop requests received so far.
func (f *fakeAnthropic) mainCalls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if c.Main {
			out = append(out, c)
		}
	}
	return out
}

// paths returns "METHOD path" of every request so far, in arrival order.
func (f *fakeAnthropic) paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Method+" "+c.Path)
	}
	return out
}

// ServeHTTP answers one request. It never waits on anything.
func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		f.t.Logf("fake anthropic: %s %s: reading body: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	call := fakeCall{Method: r.Method, Path: r.URL.Path}
	var req messagesRequest
	if strings.HasPrefix(r.URL.Path, "/v1/messages") && len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			f.t.Logf("fake anthropic: %s %s: bad JSON: %v", r.Method, r.URL.Path, err)
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
		f.t.Logf("fake anthropic: %s %s model=%q stream=%v max_tokens=%d messages=%d tools=%d last user=%q",
			r.Method, r.URL.Path, req.Model, req.Stream, req.MaxTokens, len(req.Messages), len(req.Tools), clipText(req.userText(), 120))
	} else {
		f.t.Logf("fake anthropic: %s %s (%d bytes)", r.Method, r.URL.Path, len(body))
	}

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4+1)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		rep := fakeReply{Text: "ok"}
		if call.Main {
			rep = f.reply(req)
		}
		if req.Stream {
			writeStream(w, req.Model, rep)
		} else {
			writeMessage(w, req.Model, rep)
		}
	default:
		http.NotFound(w, r)
	}
}

// writeMessage answers a non-streaming request with one whole message.
func writeMessage(w http.ResponseWriter, model string, rep fakeReply) {
	content := []map[string]any{}
	stop := "end_turn"
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	if rep.ToolName != "" {
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_fake_1", "name": rep.ToolName, "input": json.RawMessage(rep.ToolInput)})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 5},
	})
}

// writeStream answers a streaming request with Server-Sent Events in the
// Messages API's order: message_start, per block start/deltas/stop,
// message_delta (stop reason, usage), message_stop.
func writeStream(w http.ResponseWriter, model string, rep fakeReply) {
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
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
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
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_fake_1", "name": rep.ToolName, "input": map[string]any{}}})
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

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// FuzzFakeAnthropic feeds arbitrary bodies to the fake: whatever a Claude
// Code version sends, the fake answers (never panics, never hangs).
func FuzzFakeAnthropic(f *testing.F) {
	f.Add(`{"model":"m","stream":true,"messages":[{"role":"user","content":"say hello"}],"tools":[{}]}`)
	f.Add(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"write hi into notes.txt"}]}],"tools":[{}]}`)
	f.Add(`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}],"tools":[{}]}`)
	f.Add(`{"messages":[{"role":"user","content":7}]}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, body string) {
		fake := &fakeAnthropic{t: t, reply: fakeModel("/nowhere")}
		for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens", "/other"} {
			w := httptest.NewRecorder()
			fake.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
			if w.Code == 0 {
				t.Errorf("POST %s: no status", path)
			}
		}
	})
}
