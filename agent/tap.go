package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/projector"
)

// Direction says which way a frame travelled.
type Direction uint8

// The two directions of a frame.
const (
	// FromAgent is a line the agent wrote on its stdout.
	FromAgent Direction = iota + 1
	// ToAgent is a line the gateway wrote to the agent's stdin.
	ToAgent
)

func (d Direction) String() string {
	if d == ToAgent {
		return "to-agent"
	}
	return "from-agent"
}

// FrameSink receives every frame of both directions, in wire order, as the
// exact bytes of the line without its newline. It is called with the tap's
// lock held and must not call back into the Process; the line must not be
// retained after it returns unless copied.
type FrameSink func(dir Direction, line []byte)

// MaxLine is the longest line the tap reads at all; the rest of a longer
// line is discarded (and logged) without buffering it.
const MaxLine = 64 * 1024 * 1024

// readBuffer is the size of the tap's buffer on the agent's stdout, all a
// connection keeps between lines: a longer line is gathered in a slice of
// its own, which goes with the line.
const readBuffer = 8 << 10

// tap sits on the agent's stdio: it reads and records every line, and is
// the gateway's end of the JSON-RPC connection (rpc.go).
type tap struct {
	log *slog.Logger

	mu      sync.Mutex // guards sink, pending, secretEnv and the order of frames
	sink    FrameSink
	pending [][]byte // frames seen before a sink was set, with a direction byte prefix
	// secretEnv names the MCP servers' env entries whose values the sink
	// gets as Redacted (MCPServer.SecretEnv).
	secretEnv []string

	stdin io.Writer // the agent's stdin
	// wmu orders the writes to stdin (frames are recorded in the order
	// they are written); taken before mu.
	wmu sync.Mutex

	// done is closed when the agent's stdout has ended.
	done chan struct{}

	// onUpdate is called, in wire order and on the reader goroutine, for
	// each session/update notification. It must not block.
	onUpdate func(u projector.Update)
	// onAnswered is called on the reader goroutine with the session of
	// each session/prompt the agent answers, before the answer goes to
	// its caller: the updates after it come after the turn
	// (Session.PromptThen). It must not block.
	onAnswered func(sessionID string)
	// onRequest is called on the reader goroutine for each request other
	// than elicitation/create, with copies of its id and params; it must
	// answer it (respond), and must not block.
	onRequest func(id []byte, method string, params []byte)
	// onComplete is called on the reader goroutine with the params of
	// each elicitation/complete notification. It must not block.
	onComplete func(params []byte)
	// onElicit is called on the reader goroutine for each
	// elicitation/create request, with copies of its id and params. It
	// must not block.
	onElicit func(id, params []byte)

	frame acpwire.Frame // reused by the reader goroutine

	// Guarded by mu (rawcall.go, rpc.go): the session/new and
	// session/load requests whose results are watched for models (the
	// session id of a load), the models found by session id, the
	// requests waiting for their answers, the number of the last one, and
	// the agent's requests being answered, by id ($/cancel_request).
	asked    map[string]string
	prompts  map[string]string // session/prompt request id → its session
	models   map[string]json.RawMessage
	calls    map[string]chan rawReply
	next     int
	inflight map[string]context.CancelFunc

	// unknown are the unknown notifications logged, by method and
	// session (reader goroutine only).
	unknown map[[2]string]bool
}

// maxUnknown bounds the unknown notifications remembered as logged.
const maxUnknown = 1024

// unknownNotification logs a notification the gateway does not know, the
// first time its method comes for its session, and drops it.
func (t *tap) unknownNotification(f *acpwire.Frame) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(f.Params, &p)
	key := [2]string{f.Method, p.SessionID}
	if t.unknown[key] {
		return
	}
	if t.unknown == nil || len(t.unknown) >= maxUnknown {
		t.unknown = map[[2]string]bool{}
	}
	t.unknown[key] = true
	t.log.Info("the agent sent a notification the gateway does not know; ignored (said once per session)", "method", clip([]byte(f.Method)), "session", clip([]byte(p.SessionID)))
}

// maxPending bounds the frames kept before the event log is attached.
const maxPending = 4096

// setSink attaches the sink and hands it the frames seen so far.
func (t *tap) setSink(s FrameSink) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sink = s
	for _, p := range t.pending {
		s(Direction(p[0]), p[1:])
	}
	t.pending = nil
}

// redactEnv adds names to the env entries redacted from the frames the
// sink gets.
func (t *tap) redactEnv(names []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range names {
		if !slices.Contains(t.secretEnv, n) {
			t.secretEnv = append(t.secretEnv, n)
		}
	}
}

// recordLocked passes one frame to the sink or keeps it until there is
// one. A frame to the agent loses its MCP servers' secrets (redactMCP).
func (t *tap) recordLocked(dir Direction, line []byte) {
	if dir == ToAgent {
		line = redactMCP(line, t.secretEnv)
	}
	if t.sink != nil {
		t.sink(dir, line)
		return
	}
	if len(t.pending) >= maxPending {
		return
	}
	p := make([]byte, 1+len(line))
	p[0] = byte(dir)
	copy(p[1:], line)
	t.pending = append(t.pending, p)
}

// Write writes one JSON-RPC message, ending in a newline, to the agent,
// after recording it.
// The write holds wmu, not mu: an agent that stops reading its stdin
// until its stdout is read (a full pipe each way) must not stop the
// reader goroutine, which takes mu for every line.
func (t *tap) Write(b []byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.mu.Lock()
	t.recordLocked(ToAgent, bytes.TrimSuffix(b, []byte("\n")))
	t.watchRequestLocked(b)
	t.mu.Unlock()
	return t.stdin.Write(b)
}

// pump reads the agent's stdout line by line until EOF, recording and
// handling every line. It closes done when the agent's stdout ends.
func (t *tap) pump(stdout io.Reader) {
	defer close(t.done)
	r := bufio.NewReaderSize(stdout, readBuffer)
	for {
		line, err := readLine(r)
		if errors.Is(err, errLineTooLong) {
			t.log.Error("agent wrote a line longer than the tap accepts; discarded", "limit", MaxLine)
			continue
		}
		if len(line) > 0 {
			t.line(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.log.Debug("agent output ended", "err", err)
			}
			return
		}
	}
}

// line handles one complete line from the agent.
func (t *tap) line(line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	t.mu.Lock()
	t.recordLocked(FromAgent, line)
	t.mu.Unlock()

	f := &t.frame
	if err := acpwire.Decode(trimmed, f); err != nil {
		t.log.Warn("malformed line from agent; skipped", "err", err, "line", clip(trimmed))
		return
	}
	switch f.Kind {
	case acpwire.Notification:
		switch f.Method {
		case "session/update":
			// Update strings are copies and its slices alias line,
			// which is never reused: it can be handed over as it is.
			t.onUpdate(f.Update)
		case acp.ClientMethodElicitationComplete:
			t.onComplete(f.Params)
		case "$/cancel_request":
			t.cancelInbound(f.Params)
		default:
			t.unknownNotification(f)
		}
	case acpwire.Request:
		if f.Method == acp.ClientMethodElicitationCreate && t.onElicit != nil {
			t.onElicit(bytes.Clone(f.ID), bytes.Clone(f.Params))
			return
		}
		t.onRequest(bytes.Clone(f.ID), f.Method, bytes.Clone(f.Params))
	case acpwire.Result, acpwire.Error:
		t.watchResult(f)
		if sid, ok := t.promptAnswered(f); ok && t.onAnswered != nil {
			t.onAnswered(sid)
		}
		t.deliver(f)
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline, in a fresh slice.
// A final line without a newline is returned with io.EOF.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			// Discard up to the end of this line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
				return nil, err
			}
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
		}
	}
}

// clip shortens a line for a log message.
func clip(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
