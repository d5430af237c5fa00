// Package fakemodel is a local stand-in for three model APIs that coding
// agents call, enough to run Gemini CLI, Codex, opencode and Qwen Code
// offline in tests: Gemini's REST API (generateContent,
// streamGenerateContent with alt=sse, countTokens), the OpenAI Responses
// API (SSE, function and custom tool calls) and OpenAI Chat Completions
// (SSE or whole, tool calls). One Server answers all three on one loopback
// port.
//
// A Script says what the model answers: for a prompt (a piece of the
// user's text), a list of steps, each some text, a tool call, or both. The
// server keeps no conversation state: it finds the user's latest prompt in
// the request and counts the tool results that follow it, so step n is
// answered after n tool results, whatever side calls, retries or restarts
// of the agent come in between. Requests that match no prompt (titles,
// suggestions, memory extraction, routers), and requests that offer no
// tools, get a short plain text, or, when they ask for JSON with a schema,
// an object that fits the schema.
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// SideText is the answer to a request no prompt of the script matches.
const SideText = "ok"

// maxBody bounds a request body the fake reads.
const maxBody = 64 << 20

// Script is what the fake model answers, by prompt.
type Script []Turn

// Turn is the model's part of one user turn: Prompt is a piece of the
// user's text that selects it; Steps are answered in order, the first to
// the prompt and each next one after the previous step's tool result.
type Turn struct {
	Prompt string
	Steps  []Step
}

// Step is one answer of the model: Text (streamed in Chunks pieces, 1 if
// 0), then optionally a call of tool Tool with Args. Args is a JSON object,
// or for a Custom (freeform) tool of the Responses API its raw input. ID is
// the call's id (one derived from the step if empty).
//
// Hold makes the answer stream its text and then wait, neither finishing
// nor calling the tool, until the agent drops the request (a stop) or the
// server closes.
type Step struct {
	Text   string
	Chunks int
	Tool   string
	Args   string
	Custom bool
	ID     string
	Hold   bool
}

// Request is the part of any of the three APIs' requests the fake reads,
// in one form.
type Request struct {
	// API is "gemini", "responses" or "chat".
	API   string
	Path  string
	Model string
	// Stream is true for an answer as Server-Sent Events.
	Stream bool
	System string
	// Messages is the conversation in order.
	Messages []Message
	// Tools are the names of the tools offered.
	Tools []string
	// Schema is the JSON schema the answer must fit, if the request asks
	// for JSON with one.
	Schema json.RawMessage
}

// Message is one entry of a conversation: a user's or the assistant's
// text, the assistant's tool calls, or a tool's result (Role "tool").
type Message struct {
	Role      string
	Text      string
	ToolCalls []ToolCall
	// ToolCallID and Output are a tool result's.
	ToolCallID string
	Output     string
}

// ToolCall is one call the assistant made.
type ToolCall struct {
	ID, Name, Args string
}

// Call is one request the fake received and what it matched.
type Call struct {
	Method, Path string
	Req          Request
	// Prompt is the matched turn's prompt ("" for a side request) and Step
	// the index of the step answered.
	Prompt string
	Step   int
}

// Server answers the three APIs from its script and records every request.
type Server struct {
	// URL is the server's base URL, with no path.
	URL string

	tb     testing.TB
	script Script
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex // guards calls and holds
	calls []Call
	holds int
	held  chan struct{} // closed and replaced at each new held request
}

// New starts the fake on a loopback port. It is closed when the test ends
// (after cleanups registered later, such as stopping the agent, have run).
func New(tb testing.TB, script Script) *Server {
	s := NewHandler(tb, script)
	srv := httptest.NewServer(s)
	tb.Cleanup(func() {
		s.release()
		srv.Close()
	})
	s.URL = srv.URL
	return s
}

// NewHandler returns the fake without starting a server (for fuzzing its
// ServeHTTP).
func NewHandler(tb testing.TB, script Script) *Server {
	return &Server{tb: tb, script: script, done: make(chan struct{}), held: make(chan struct{})}
}

func (s *Server) release() { s.once.Do(func() { close(s.done) }) }

// Calls returns the requests received so far, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Main returns the requests that matched a prompt of the script.
func (s *Server) Main() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Prompt != "" {
			out = append(out, c)
		}
	}
	return out
}

// Held returns a channel closed once n requests in all have reached a Hold
// step (their text sent).
func (s *Server) Held(n int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for {
			s.mu.Lock()
			got, next := s.holds, s.held
			s.mu.Unlock()
			if got >= n {
				close(ch)
				return
			}
			select {
			case <-next:
			case <-s.done:
				return
			}
		}
	}()
	return ch
}

// hold waits, after a Hold step's text, until the request is dropped or
// the server closes.
func (s *Server) hold(ctx context.Context) {
	s.mu.Lock()
	s.holds++
	close(s.held)
	s.held = make(chan struct{})
	s.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-s.done:
	}
}

// match finds the step that answers req: the turn whose prompt is in the
// latest user text, and the step after as many tool results as follow
// that text. A step whose tool the request does not offer is not
// answered (a side request that carries the conversation), nor is one
// past the turn's last step. A request that offers no tools, or asks for
// JSON with a schema, is a side request.
// exactly reports whether text is one of the script's prompts, alone,
// and that prompt's steps call no tool.
func (s Script) exactly(text string) bool {
	text = strings.TrimSpace(text)
	for _, t := range s {
		if t.Prompt == text && !slices.ContainsFunc(t.Steps, func(st Step) bool { return st.Tool != "" }) {
			return true
		}
	}
	return false
}

func (s Script) match(req Request) (prompt string, idx int, step Step, ok bool) {
	if len(req.Schema) > 0 {
		return "", 0, Step{}, false
	}
	last := -1
	for i, m := range req.Messages {
		if m.Role == "user" && strings.TrimSpace(m.Text) != "" {
			last = i
		}
	}
	if last < 0 {
		return "", 0, Step{}, false
	}
	if len(req.Tools) == 0 && !s.exactly(req.Messages[last].Text) {
		// A side request (a title, a summary) quotes the prompt inside
		// its own words. Only the conversation itself sends a prompt
		// alone without tools: Codex after a model switch offers the
		// new model none.
		return "", 0, Step{}, false
	}
	// The prompt found last in the text wins: an agent may send a stopped
	// prompt again glued before the next one (Qwen Code after a resume).
	text, at, turn := req.Messages[last].Text, -1, -1
	for i, t := range s {
		if j := strings.LastIndex(text, t.Prompt); t.Prompt != "" && j >= 0 && j >= at {
			at, turn = j, i
		}
	}
	for _, t := range s[max(turn, 0):] {
		if turn < 0 {
			break
		}
		for _, m := range req.Messages[last+1:] {
			if m.Role == "tool" {
				idx++
			}
		}
		if idx >= len(t.Steps) {
			return "", 0, Step{}, false
		}
		st := t.Steps[idx]
		if st.Tool != "" && !offers(req.Tools, st.Tool) {
			return "", 0, Step{}, false
		}
		return t.Prompt, idx, st, true
	}
	return "", 0, Step{}, false
}

func offers(tools []string, name string) bool {
	for _, t := range tools {
		if t == name {
			return true
		}
	}
	return false
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		s.tb.Logf("fake model: %s %s: reading body: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	var (
		req    Request
		answer func(http.ResponseWriter, *http.Request, Request, Step, string)
	)
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/v1beta/models/") && strings.HasSuffix(path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, len(body)/4+1)
		s.record(Call{Method: r.Method, Path: path})
		return
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/v1beta/models/") &&
		(strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		req, err = decodeGemini(body)
		req.Model = strings.TrimPrefix(path[:strings.LastIndexByte(path, ':')], "/v1beta/models/")
		req.Stream = strings.HasSuffix(path, ":streamGenerateContent")
		answer = writeGemini
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		req, err = decodeResponses(body)
		answer = writeResponses
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		req, err = decodeChat(body)
		answer = writeChat
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","created":0,"owned_by":"fake"}],"models":[]}`)
		s.record(Call{Method: r.Method, Path: path})
		return
	default:
		s.tb.Logf("fake model: %s %s (%d bytes): not found", r.Method, r.URL.RequestURI(), len(body))
		s.record(Call{Method: r.Method, Path: path})
		http.NotFound(w, r)
		return
	}
	if err != nil {
		s.tb.Logf("fake model: %s %s: bad request: %v", r.Method, path, err)
		http.Error(w, `{"error":{"code":400,"message":"bad request","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	req.Path = path
	call := Call{Method: r.Method, Path: path, Req: req}
	prompt, idx, step, ok := s.script.match(req)
	if ok {
		call.Prompt, call.Step = prompt, idx
	} else {
		step = Step{Text: SideText}
		if len(req.Schema) > 0 {
			step.Text = string(FitSchema(req.Schema))
		}
	}
	s.record(call)
	s.tb.Logf("fake model: %s %s model=%q stream=%v messages=%d tools=%d prompt=%q step=%d last=%q",
		r.Method, path, req.Model, req.Stream, len(req.Messages), len(req.Tools), prompt, idx, clip(lastText(req), 100))
	callID := step.ID
	if callID == "" {
		callID = fmt.Sprintf("call_%d_%d", len(s.Calls()), idx)
	}
	answer(w, r, req, step, callID)
	if step.Hold {
		s.hold(r.Context())
	}
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

// lastText is the last message's text or output, for the log.
func lastText(r Request) string {
	if n := len(r.Messages); n > 0 {
		if m := r.Messages[n-1]; m.Role == "tool" {
			return "tool result: " + m.Output
		} else {
			return m.Text
		}
	}
	return ""
}

// sse writes Server-Sent Events and flushes each.
type sse struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	return sse{w: w, fl: fl}
}

// event writes one event, named if name is not empty.
func (e sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if e.fl != nil {
		e.fl.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// splitRunes cuts s into n pieces of about equal length (at rune
// boundaries); an empty s gives none.
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
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// FitSchema returns a JSON value that fits schema (a JSON schema, or
// Gemini's form of one with upper-case types): each object's required
// properties (all of them if none is required), the first of an enum, the
// minimum of a number, "fake" for a string. An unreadable schema gives {}.
func FitSchema(schema json.RawMessage) json.RawMessage {
	var sc schemaNode
	if json.Unmarshal(schema, &sc) != nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(sc.value(0))
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

type schemaNode struct {
	Type       json.RawMessage        `json:"type"`
	Properties map[string]*schemaNode `json:"properties"`
	Required   []string               `json:"required"`
	Items      *schemaNode            `json:"items"`
	Enum       []json.RawMessage      `json:"enum"`
	Minimum    *float64               `json:"minimum"`
}

// value builds the node's example, depth bounding a recursive schema.
func (n *schemaNode) value(depth int) any {
	if n == nil || depth > 16 {
		return nil
	}
	if len(n.Enum) > 0 {
		return n.Enum[0]
	}
	var typ string
	if json.Unmarshal(n.Type, &typ) != nil {
		var types []string
		if json.Unmarshal(n.Type, &types) == nil && len(types) > 0 {
			typ = types[0]
		}
	}
	switch strings.ToLower(typ) {
	case "string":
		return "fake"
	case "integer", "number":
		if n.Minimum != nil {
			return *n.Minimum
		}
		return 1
	case "boolean":
		return false
	case "array":
		if n.Items == nil {
			return []any{}
		}
		return []any{n.Items.value(depth + 1)}
	case "null":
		return nil
	}
	obj := map[string]any{}
	names := n.Required
	if len(names) == 0 {
		for k := range n.Properties {
			names = append(names, k)
		}
	}
	for _, k := range names {
		obj[k] = n.Properties[k].value(depth + 1)
	}
	return obj
}
