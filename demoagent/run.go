package demoagent

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// ErrCrash is returned by [Run] when a prompt ran the "crash" scenario:
// the agent wrote some text and then stopped writing mid-turn, without
// answering the prompt. The demo-agent command turns it into exit status
// [CrashExitStatus], so the gateway sees an agent process die mid-turn.
// The package itself never exits the process.
var ErrCrash = errors.New("demo agent crashed on purpose")

// CrashExitStatus is the exit status the demo-agent command uses for [ErrCrash].
const CrashExitStatus = 3

// errShuttingDown answers requests that arrive while Run is returning.
var errShuttingDown = errors.New("demo agent is shutting down")

// Run serves one ACP connection: it reads JSON-RPC frames from stdin and
// writes frames, and nothing else, to stdout. It blocks until stdin ends
// (then it returns nil), ctx ends (ctx.Err()) or a prompt ran the "crash"
// scenario ([ErrCrash]). Before returning it cancels every running turn
// (they answer with stopReason cancelled) and waits until every request
// handler has returned and its answer was written; if stdin is an io.Closer
// it is closed so that the SDK's reader goroutine ends too. After Run
// returns nothing more is written to stdout. A write blocked because the
// peer stopped reading holds Run up until the peer reads or closes. Run fails early only if the state directory cannot
// be created.
func Run(ctx context.Context, stdin io.Reader, stdout io.Writer, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := o.StateDir
	if dir == "" {
		dir = DefaultStateDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}

	life, stop := context.WithCancel(ctx)
	defer stop()
	a := &agent{
		log:      log,
		store:    store{dir: dir},
		authEnv:  o.AuthEnv,
		noLoad:   o.NoLoad,
		noResume: o.NoResume,
		noImages: o.NoImages,
		legacy:   o.LegacyModes || o.LikeGemini,
		gemini:   o.LikeGemini,
		login:    o.LoginMessage,
		getenv:   getenv,
		life:     life,
		wire:     newWire(stdout),
		crashed:  make(chan struct{}),
		sessions: make(map[acp.SessionId]*session),
	}
	a.authed.Store(o.AuthEnv == "")
	ready := make(chan struct{})
	var in io.Reader = gatedReader{r: stdin, ready: ready}
	if o.LikeGemini {
		in = &unstableMethods{r: bufio.NewReader(in)}
	}
	a.conn = acp.NewAgentSideConnection(a, a.wire, in)
	a.conn.SetLogger(log)
	close(ready)
	log.Debug("demo agent serving", "stateDir", dir, "auth", o.AuthEnv != "")

	var err error
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
		err = ctx.Err()
	case <-a.crashed:
		err = ErrCrash
	}
	stop()
	select {
	case <-a.conn.Done():
	default:
		if c, ok := stdin.(io.Closer); ok {
			c.Close()
		}
	}
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	a.handlers.Wait()
	a.wire.waitAnswers()
	a.wire.close()
	log.Debug("demo agent stopped", "err", err)
	return err
}

// crash stops all output at once and makes Run return ErrCrash.
func (a *agent) crash() {
	a.crashOnce.Do(func() {
		a.wire.close()
		close(a.crashed)
	})
}

// enter registers a request handler with Run, which waits for it and for
// the answer the SDK writes after it before returning. The returned
// function marks the handler done. Every request handler calls it.
func (a *agent) enter() (func(), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return nil, errShuttingDown
	}
	a.handlers.Add(1)
	a.wire.expectAnswer()
	return a.handlers.Done, nil
}

// join returns a context that ends with ctx or when Run stops.
func (a *agent) join(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(a.life, cancel)
	return ctx, func() { unhook(); cancel() }
}

// lookup returns the live session id, or nil.
func (a *agent) lookup(id acp.SessionId) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// adopt makes s the live session for its id and returns the live one.
// A session already live in this process wins over a record read from disk.
func (a *agent) adopt(s *session) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.sessions[s.id]; ok {
		return old
	}
	a.sessions[s.id] = s
	return s
}

// session is one live session. Its prompts run one at a time.
type session struct {
	id    acp.SessionId
	turn  chan struct{} // holds a token while a prompt runs
	store store

	mu      sync.Mutex // guards the fields below
	rec     record
	cancels map[*context.CancelFunc]struct{} // running and waiting prompts
	mcp     []acp.McpServer                  // given by the last session/new or session/load
	always  bool                             // "Always allow" was chosen for an edit (this process's life)
}

// allowAlways notes that edits are allowed without asking.
func (s *session) allowAlways() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always = true
}

// allowsAlways reports whether "Always allow" was chosen for an edit.
func (s *session) allowsAlways() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.always
}

// setMCP keeps the MCP servers the client gave the session.
func (s *session) setMCP(servers []acp.McpServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mcp = servers
}

// mcpServers returns the MCP servers the client gave the session.
func (s *session) mcpServers() []acp.McpServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mcp
}

func newSession(rec record, st store) *session {
	return &session{
		id:      acp.SessionId(rec.ID),
		turn:    make(chan struct{}, 1),
		store:   st,
		rec:     rec,
		cancels: make(map[*context.CancelFunc]struct{}),
	}
}

// onCancel registers cancel to be called by session/cancel until the
// returned function is called.
func (s *session) onCancel(cancel context.CancelFunc) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := &cancel
	s.cancels[key] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.cancels, key)
	}
}

// cancelAll cancels every running or waiting prompt of the session.
func (s *session) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.cancels {
		(*c)()
	}
}

// snapshot returns a copy of the session's record.
func (s *session) snapshot() record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec
	r.History = append([]message(nil), s.rec.History...)
	return r
}

// change applies f to the record and saves it. It does file I/O.
func (s *session) change(f func(*record)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.rec)
	return s.store.save(s.rec)
}

// Main is the demo-agent command: it parses args (ParseFlags; arguments
// of the go test driver, "-test.*", are ignored so that a test binary can
// serve as the agent), serves one connection on stdin/stdout, logs
// warnings to stderr, and returns the process's exit status: 0, 2 for bad
// flags, CrashExitStatus for the crash scenario, 1 for other errors. It
// never exits itself.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var kept []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-test.") {
			kept = append(kept, a)
		}
	}
	o, err := ParseFlags(kept)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, err)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "demo-agent:", err)
		return 2
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	err = Run(ctx, stdin, stdout, o)
	switch {
	case errors.Is(err, ErrCrash):
		return CrashExitStatus
	case err != nil:
		fmt.Fprintln(stderr, "demo-agent:", err)
		return 1
	}
	return 0
}
