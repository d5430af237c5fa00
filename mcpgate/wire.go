package mcpgate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// The socket protocol: the MCP half connects, writes one request as a JSON
// line, reads one response as a JSON line, and hangs up.

// Tool names, as the agent sees them.
const (
	ToolSendFile    = "send_file"
	ToolSendMessage = "send_message"
	ToolReadThread  = "read_thread"
	ToolAsk         = "ask"
)

// Environment variables that tell the MCP half where the gateway half
// listens and the token it must present.
const (
	EnvSocket = "ACPGW_MCP_SOCKET"
	EnvToken  = "ACPGW_MCP_TOKEN"
)

const (
	// maxRequestBytes bounds one request line.
	maxRequestBytes = 1 << 20
	// maxResponseBytes bounds one response line (read_thread's messages).
	maxResponseBytes = 16 << 20
	// DefaultReadLimit is how many messages read_thread returns when the
	// agent gives no limit; MaxReadLimit is the most it returns.
	DefaultReadLimit = 20
	MaxReadLimit     = 100
	// MaxAskOptions bounds ask's options (a select menu shows at most
	// 25); MaxAskChars bounds its question and each option, in bytes.
	MaxAskOptions = 25
	MaxAskChars   = 2000
)

// request is one tool call over the socket.
type request struct {
	Token string `json:"token"`
	Tool  string `json:"tool"`
	// send_file
	Path    string `json:"path,omitempty"`
	Caption string `json:"caption,omitempty"`
	// send_message
	Text string `json:"text,omitempty"`
	// read_thread; 0 means DefaultReadLimit
	Limit int `json:"limit,omitempty"`
	// ask: the question, and the choices (none: a text answer)
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`
}

// response is the answer to one request: Error says why the call was
// refused or failed, Text what was done.
type response struct {
	Text     string    `json:"text,omitempty"`
	Error    string    `json:"error,omitempty"`
	Messages []Message `json:"messages,omitempty"`
}

// Message is one message of a thread, as read_thread returns it.
type Message struct {
	Author string    `json:"author"`
	Bot    bool      `json:"bot,omitempty"` // written by this gateway's bot
	Time   time.Time `json:"time"`
	Text   string    `json:"text"`
}

// readLine reads one newline-terminated line of at most max bytes.
func readLine(r io.Reader, max int) ([]byte, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, int64(max)+1), 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("line longer than %d bytes", max)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, errors.New("line not terminated")
		default:
			return nil, err
		}
	}
}

// decodeRequest reads and validates one request line. It returns an error
// for a line too long, malformed JSON, unknown fields, an unknown tool, or
// arguments out of range; the token is not checked here.
func decodeRequest(r io.Reader) (request, error) {
	line, err := readLine(r, maxRequestBytes)
	if err != nil {
		return request{}, fmt.Errorf("read request: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var req request
	if err := dec.Decode(&req); err != nil {
		return request{}, fmt.Errorf("decode request: %w", err)
	}
	if dec.More() {
		return request{}, errors.New("decode request: trailing data after the object")
	}
	switch req.Tool {
	case ToolSendFile:
		if req.Path == "" {
			return request{}, errors.New("send_file: path is empty")
		}
	case ToolSendMessage:
		if req.Text == "" {
			return request{}, errors.New("send_message: text is empty")
		}
	case ToolReadThread:
		if req.Limit < 0 || req.Limit > MaxReadLimit {
			return request{}, fmt.Errorf("read_thread: limit must be 1 to %d, got %d", MaxReadLimit, req.Limit)
		}
		if req.Limit == 0 {
			req.Limit = DefaultReadLimit
		}
	case ToolAsk:
		if err := checkAsk(req.Question, req.Options); err != nil {
			return request{}, err
		}
		if len(req.Options) == 0 {
			req.Options = nil
		}
	default:
		return request{}, fmt.Errorf("unknown tool %q", req.Tool)
	}
	return req, nil
}

// checkAsk says what is wrong with ask's arguments: an empty or too long
// question, too many options, an empty, too long or repeated option.
func checkAsk(question string, options []string) error {
	if strings.TrimSpace(question) == "" {
		return errors.New("ask: question is empty")
	}
	if len(question) > MaxAskChars {
		return fmt.Errorf("ask: question is longer than %d bytes", MaxAskChars)
	}
	if len(options) > MaxAskOptions {
		return fmt.Errorf("ask: at most %d options, got %d", MaxAskOptions, len(options))
	}
	seen := make(map[string]bool, len(options))
	for i, o := range options {
		switch {
		case strings.TrimSpace(o) == "":
			return fmt.Errorf("ask: option %d is empty", i+1)
		case len(o) > MaxAskChars:
			return fmt.Errorf("ask: option %d is longer than %d bytes", i+1, MaxAskChars)
		case seen[o]:
			return fmt.Errorf("ask: option %q is given twice", o)
		}
		seen[o] = true
	}
	return nil
}

// writeLine writes v as one JSON line.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
