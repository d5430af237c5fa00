package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/internal/streamplayer"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/sandbox/egress"
)

// TestMain lets the test binary serve as the demo agent: the tests start
// it as a real subprocess through the same spawn code as real agents.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" { // a sandboxed agent's parent (network full, allow)
		os.Exit(egress.RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) == 2 && os.Args[1] == "mcp" && os.Getenv(mcpgate.EnvSocket) != "" {
		// The MCP half the gateway gives agents ("gateway mcp").
		if err := mcpgate.Serve(context.Background(), os.Getenv(mcpgate.EnvSocket), os.Getenv(mcpgate.EnvToken), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if path, ok := os.LookupEnv("SESSION_TEST_MUTE_AGENT"); ok {
		muteAgent(path)
		os.Exit(0)
	}
	if os.Getenv("SESSION_TEST_DEAF_AGENT") != "" {
		deafAgent()
		os.Exit(0)
	}
	if path := os.Getenv("SESSION_TEST_STREAM_PLAYER"); path != "" {
		os.Exit(streamplayer.Main(path, os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("SESSION_TEST_DEMO_AGENT") != "" {
		var stdin io.Reader = os.Stdin
		var stdout io.Writer = os.Stdout
		if dir := os.Getenv("SESSION_TEST_WIRE_DIR"); dir != "" {
			stdin, stdout = recordWire(dir, os.Stdin, os.Stdout)
		}
		os.Exit(demoagent.Main(context.Background(), os.Args[1:], stdin, stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// recordWire copies what the agent reads and writes, byte for byte, into
// PID.in and PID.out in dir: the agent's own record of the frames it
// exchanged, to compare with the gateway's event log. A frame is recorded
// before it is written, and after it is read. When its stdin ends, the
// agent writes one more frame (goodbyeFrame), as real agents flush a last
// notification while they stop.
func recordWire(dir string, stdin *os.File, stdout io.Writer) (io.Reader, io.Writer) {
	base := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	in, err := os.Create(base + ".in")
	if err != nil {
		panic(err)
	}
	out, err := os.Create(base + ".out")
	if err != nil {
		panic(err)
	}
	w := &lockedWriter{w: io.MultiWriter(out, stdout)}
	return &teeStdin{r: io.TeeReader(stdin, in), f: stdin, w: w}, w
}

// goodbyeFrame is the frame a wire-recording agent writes at stdin's end.
const goodbyeFrame = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"goodbye","update":{"sessionUpdate":"usage_update","used":1,"size":2}}}`

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// teeStdin records stdin, says goodbye at its end, and keeps its Close,
// which the demo agent uses to stop reading.
type teeStdin struct {
	r    io.Reader
	f    *os.File
	w    io.Writer
	once sync.Once
}

func (t *teeStdin) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.EOF) {
		t.once.Do(func() { t.w.Write([]byte(goodbyeFrame + "\n")) })
	}
	return n, err
}

func (t *teeStdin) Close() error { return t.f.Close() }

// deafAgent answers initialize and session/new, and on a prompt sends one
// chunk, closes its stdin (so session/cancel cannot be written) and hangs.
func deafAgent() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil {
			continue
		}
		send := func(s string) { os.Stdout.WriteString(s + "\n") }
		switch req.Method {
		case "initialize":
			send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}`)
		case "session/new":
			send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"sessionId":"deaf-1"}}`)
		case "session/prompt":
			send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"deaf-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"working"}}}}`)
			os.Stdin.Close()
			select {}
		}
	}
}

// muteAgent never answers: an agent stuck in its start (waiting for a
// login, a download). On initialize it writes its pid to the FIFO at
// path, if any, so a test knows the gateway is waiting for it. With
// SESSION_TEST_MUTE_HOLD set to a FIFO, it first waits for a writer to
// open that FIFO, before it reads anything: a process that is slow to come
// up, as on a loaded machine.
func muteAgent(path string) {
	if hold := os.Getenv("SESSION_TEST_MUTE_HOLD"); hold != "" {
		if f, err := os.Open(hold); err == nil {
			f.Close()
		}
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) == nil && req.Method == "initialize" && path != "" {
			if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				fmt.Fprintf(f, "%d\n", os.Getpid())
				f.Close()
			}
		}
	}
}
