// Package streamplayer is an ACP agent, for tests, that plays the agent's
// side of a recorded stream (replay/testdata/streams/*.ndjson) to a live
// gateway: it answers each request the gateway sends with the recorded
// answer to the matching recorded request (same method, in order, the id
// rewritten to the gateway's), writes the recorded agent frames (updates,
// permission requests, other agent requests) in recorded order, and waits
// where the recording waits for a client frame. A gateway that sends
// something the recording does not have at that point, or answers a
// permission request differently, is a failure: Play returns an error
// naming the recording's line and both frames.
//
// Client requests the gateway never sends on its own (session/set_mode,
// session/set_model, session/set_config_option: a person asks for them)
// are skipped when the gateway's next frame is something else, with
// their recorded answers and the agent's notifications sent while they
// were pending (gemini-cli answers session/set_mode with a text chunk):
// an agent says nothing about a call it never had.
package streamplayer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// frame is one line of a recording or of the gateway's output.
type frame struct {
	line   int // in the recording; 0 for the gateway's frames
	raw    []byte
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`

	client bool   // sent by the client (the gateway)
	answer string // a response: the method of the request it answers
}

func (f *frame) isResponse() bool { return f.Method == "" }
func (f *frame) isRequest() bool  { return f.Method != "" && len(f.ID) > 0 }

func (f *frame) idKey() string {
	var b bytes.Buffer
	if json.Compact(&b, f.ID) != nil {
		return string(f.ID)
	}
	return b.String()
}

func (f *frame) String() string {
	s := string(f.raw)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if f.line > 0 {
		return fmt.Sprintf("line %d: %s", f.line, s)
	}
	return s
}

// ClientMethod reports whether method is sent by the client side of ACP
// (initialize, authenticate, session/* but session/update and
// session/request_permission); every other method (fs/*, terminal/*,
// elicitation/*, an agent's own extensions) is the agent's.
func ClientMethod(method string) bool {
	switch method {
	case "initialize", "authenticate":
		return true
	case "session/update", "session/request_permission":
		return false
	}
	return strings.HasPrefix(method, "session/")
}

// skippable are the client requests a gateway sends only when a person
// asks for them.
var skippable = map[string]bool{"session/set_mode": true, "session/set_model": true, "session/set_config_option": true}

// Parse reads a recording: one JSON-RPC frame per line, both sides in
// wire order. A response belongs to the other side's pending request with
// its id.
func Parse(recording []byte) ([]*frame, error) {
	var frames []*frame
	pending := map[bool]map[string]string{true: {}, false: {}} // by sender: id → method
	for i, line := range bytes.Split(recording, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := &frame{line: i + 1, raw: line}
		if err := json.Unmarshal(line, f); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		switch {
		case f.Method != "":
			f.client = ClientMethod(f.Method)
			if len(f.ID) > 0 {
				pending[f.client][f.idKey()] = f.Method
			}
		default:
			key := f.idKey()
			am, agentOK := pending[false][key]
			cm, clientOK := pending[true][key]
			if agentOK && clientOK && !fits(am, f) {
				agentOK = false // pending on both sides: the one it fits
			}
			if agentOK {
				f.client, f.answer = true, am
				delete(pending[false], key)
			} else if clientOK {
				f.answer = cm
				delete(pending[true], key)
			} else {
				return nil, fmt.Errorf("line %d: a response to no pending request (id %s)", f.line, key)
			}
		}
		frames = append(frames, f)
	}
	return frames, nil
}

// Main plays the recording at path on stdin and stdout. A failure is
// written to stderr, and to the file named by $STREAM_PLAYER_REPORT
// when it is set (a test reads it), and exits 1.
func Main(path string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := func() error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return Play(data, stdin, stdout)
	}()
	if err == nil {
		return 0
	}
	msg := fmt.Sprintf("stream player %s: %v\n", path, err)
	fmt.Fprint(stderr, msg)
	if report := os.Getenv("STREAM_PLAYER_REPORT"); report != "" {
		if f, ferr := os.OpenFile(report, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); ferr == nil {
			_, _ = f.WriteString(msg)
			_ = f.Close()
		}
	}
	return 1
}

// ErrEnded is wrapped by Play's error when the gateway closed its side
// before the recording's client frames were all sent.
var ErrEnded = errors.New("the gateway closed the stream")

// Play plays recording's agent side: it reads the gateway's frames from
// in and writes the agent's to out. It returns nil once the recording is
// played and in ends; after the recording's last frame any frame the
// gateway sends is unexpected.
func Play(recording []byte, in io.Reader, out io.Writer) error {
	frames, err := Parse(recording)
	if err != nil {
		return err
	}
	p := &player{
		sc:      bufio.NewScanner(in),
		w:       bufio.NewWriter(out),
		gwID:    map[string]json.RawMessage{},
		skipped: map[string]bool{},
	}
	p.sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for i, f := range frames {
		if err := p.play(f, frames[i+1:]); err != nil {
			return err
		}
	}
	if err := p.w.Flush(); err != nil {
		return err
	}
	g, err := p.next()
	if errors.Is(err, ErrEnded) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("after the recording ended, the gateway sent %s", g)
}

type player struct {
	sc     *bufio.Scanner
	w      *bufio.Writer
	peeked *frame
	// gwID: the gateway's id of each recorded client request it sent
	// (by the recorded id); skipped: recorded client requests it did not.
	gwID    map[string]json.RawMessage
	skipped map[string]bool
	// earlyCancels: session/cancels the gateway sent before the client
	// frames the recording has before them.
	earlyCancels int
}

// next is the gateway's next frame.
func (p *player) next() (*frame, error) {
	if g := p.peeked; g != nil {
		p.peeked = nil
		return g, nil
	}
	if err := p.w.Flush(); err != nil {
		return nil, err
	}
	for p.sc.Scan() {
		line := bytes.Clone(p.sc.Bytes())
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		g := &frame{raw: line}
		if err := json.Unmarshal(line, g); err != nil {
			return nil, fmt.Errorf("the gateway sent a malformed frame %q: %w", line, err)
		}
		return g, nil
	}
	if err := p.sc.Err(); err != nil {
		return nil, err
	}
	return nil, ErrEnded
}

func (p *player) write(b []byte) error {
	if _, err := p.w.Write(b); err != nil {
		return err
	}
	return p.w.WriteByte('\n')
}

func (p *player) play(f *frame, rest []*frame) error {
	if !f.client {
		if f.isResponse() {
			key := f.idKey()
			if p.skipped[key] {
				delete(p.skipped, key)
				return nil
			}
			id, ok := p.gwID[key]
			if !ok {
				return fmt.Errorf("%s: the gateway's %s request was not seen", f, f.answer)
			}
			delete(p.gwID, key)
			return p.write(withID(f, id))
		}
		if len(p.skipped) > 0 && !f.isRequest() {
			return nil // the agent's word on a call the gateway did not make
		}
		return p.write(f.raw)
	}
	if f.Method == "session/cancel" && p.earlyCancels > 0 {
		p.earlyCancels--
		return nil
	}
	for {
		g, err := p.next()
		if err != nil {
			return fmt.Errorf("waiting for the recording's %s: %w", f, err)
		}
		if g.Method == "session/cancel" && f.Method != "session/cancel" && cancelFollows(rest) {
			// A stop: the gateway answers the turn's permission
			// requests "cancelled" and sends session/cancel from
			// different goroutines; either may come first.
			p.earlyCancels++
			continue
		}
		if f.isResponse() {
			return answered(f, g)
		}
		if g.Method == f.Method && g.isRequest() == f.isRequest() {
			if f.isRequest() {
				p.gwID[f.idKey()] = g.ID
			}
			return nil
		}
		if f.isRequest() && skippable[f.Method] {
			p.peeked = g
			p.skipped[f.idKey()] = true
			return nil
		}
		return fmt.Errorf("the recording has the client's %s, the gateway sent %s", f, g)
	}
}

// answered checks the gateway's response g against the recorded client
// response f to an agent request: the same id, and for a permission
// request the same outcome (the option chosen, or cancelled).
func answered(f, g *frame) error {
	if !g.isResponse() || g.idKey() != f.idKey() {
		return fmt.Errorf("the recording has the client's answer to its %s (%s), the gateway sent %s", f.answer, f, g)
	}
	if f.answer != "session/request_permission" {
		return nil // fs/*, terminal/*, extensions: the gateway answers as it may
	}
	want, got := outcome(f), outcome(g)
	if want != got {
		return fmt.Errorf("permission %s answered %s, the recording answered %s (%s)", f.idKey(), got, want, f)
	}
	return nil
}

// outcome is a permission answer in words: "selected OPTION",
// "cancelled", or "error".
func outcome(f *frame) string {
	var r struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if len(f.Error) > 0 || json.Unmarshal(f.Result, &r) != nil {
		return "error"
	}
	if r.Outcome.Outcome == "selected" {
		return "selected " + r.Outcome.OptionID
	}
	return r.Outcome.Outcome
}

// fits reports whether response f can answer a request of method by its
// result's shape (a permission's outcome, a question's action).
func fits(method string, f *frame) bool {
	var res map[string]json.RawMessage
	if len(f.Result) == 0 || json.Unmarshal(f.Result, &res) != nil {
		return true
	}
	switch method {
	case "session/request_permission":
		_, ok := res["outcome"]
		return ok
	case "elicitation/create":
		_, ok := res["action"]
		return ok
	}
	return true
}

// withID is the recorded response f with the gateway's request id.
func withID(f *frame, id json.RawMessage) []byte {
	m := map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": id}
	if len(f.Error) > 0 {
		m["error"] = f.Error
	} else {
		m["result"] = f.Result
	}
	b, _ := json.Marshal(m)
	return b
}

// Action is one thing the people of a recorded session did, as its
// client frames show it.
type Action struct {
	// Kind is "prompt" (a person's message), "answer" (a click on a
	// permission prompt's Option) or "stop" (a stop: a session/cancel,
	// or a permission answered "cancelled" by the stop that follows).
	Kind string
	// Permission counts the permission requests of the recording, from
	// 0: the one an answer or a stop on a prompt is for (-1 otherwise).
	Permission int
	Option     string
	// After is the last agent_message_chunk text the agent sent before
	// a stop that is not on a prompt: once it is shown, a person stops.
	After string
	// Tool, for a stop on a prompt, is the id of the prompt's tool call
	// when the agent announced it (tool_call) before the stop: once its
	// line is shown too, a person stops.
	Tool string
}

// Script is the people's side of a recording, in order. A permission
// answered "cancelled" with a session/cancel after it in the same turn
// is one stop; a session/cancel after such a stop is the same stop.
func Script(recording []byte) ([]Action, error) {
	frames, err := Parse(recording)
	if err != nil {
		return nil, err
	}
	var out []Action
	perms := map[string]int{}       // agent request id → its number
	permTool := map[string]string{} // agent request id → its tool call's id
	announced := map[string]bool{}  // the open turn's own tool calls
	promptSession := ""             // the session the open turn was asked of
	lastChunk := ""
	stopped := false // the open turn was stopped
	for i, f := range frames {
		switch {
		case f.Method == "session/prompt":
			out = append(out, Action{Kind: "prompt", Permission: -1})
			stopped = false
			clear(announced)
			var p struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(f.Params, &p) == nil {
				promptSession = p.SessionID
			}
		case f.Method == "session/request_permission":
			perms[f.idKey()] = len(perms)
			var p struct {
				ToolCall struct {
					ToolCallID string `json:"toolCallId"`
				} `json:"toolCall"`
			}
			if json.Unmarshal(f.Params, &p) == nil {
				permTool[f.idKey()] = p.ToolCall.ToolCallID
			}
		case f.Method == "session/update":
			var u struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					SessionUpdate string `json:"sessionUpdate"`
					ToolCallID    string `json:"toolCallId"`
					// A chunk's content is an object, a tool call's a list.
					Content json.RawMessage `json:"content"`
				} `json:"update"`
			}
			if json.Unmarshal(f.Params, &u) != nil {
				break
			}
			switch u.Update.SessionUpdate {
			case "agent_message_chunk":
				var c struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(u.Update.Content, &c) == nil && c.Text != "" {
					lastChunk = c.Text
				}
			case "tool_call":
				// A subagent's tool call is folded into its card: it
				// has no line of its own to wait for.
				if u.SessionID == promptSession {
					announced[u.Update.ToolCallID] = true
				}
			}
		case f.Method == "session/cancel":
			if !stopped {
				out = append(out, Action{Kind: "stop", Permission: -1, After: lastChunk})
				stopped = true
			}
		case f.client && f.answer == "session/request_permission":
			n := perms[f.idKey()]
			o := outcome(f)
			switch {
			case strings.HasPrefix(o, "selected "):
				out = append(out, Action{Kind: "answer", Permission: n, Option: strings.TrimPrefix(o, "selected ")})
			case o == "cancelled" && cancelFollows(frames[i+1:]):
				if !stopped {
					a := Action{Kind: "stop", Permission: n}
					if id := permTool[f.idKey()]; announced[id] {
						a.Tool = id
					}
					out = append(out, a)
					stopped = true
				}
			default:
				return nil, fmt.Errorf("%s: a permission answered %s without a stop: no person does that", f, o)
			}
		case f.client && f.isResponse() && f.answer != "":
			// fs/*, terminal/*, elicitation/*, extensions: the gateway
			// answers on its own, except a question, which a person does.
			if strings.HasPrefix(f.answer, "elicitation/") {
				return nil, fmt.Errorf("%s: an answer to a question (%s): not driven", f, f.answer)
			}
		}
	}
	return out, nil
}

// cancelFollows: a session/cancel comes before the next prompt.
func cancelFollows(rest []*frame) bool {
	for _, f := range rest {
		switch f.Method {
		case "session/cancel":
			return true
		case "session/prompt":
			return false
		}
	}
	return false
}
