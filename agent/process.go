package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sandbox"
)

// Spec says how to start one agent.
type Spec struct {
	// Name is the agent's configured name, for logs.
	Name string
	// Command is the program and its arguments.
	Command []string
	// Env holds KEY=VALUE entries set for the agent. The agent does not
	// inherit the gateway's environment: it gets BaseEnv, InheritEnv and
	// Env, never a secret (see Environ).
	Env []string
	// InheritEnv names further variables of the gateway's environment the
	// agent gets (a trailing "*" matches any suffix).
	InheritEnv []string
	// Secrets are values of the gateway's own secrets (its tokens, other
	// agents' keys): no variable holding one reaches the agent.
	Secrets []string
	// SecretNames are names of variables (path.Match patterns such as
	// "SLACK_*_TOKEN") that are never inherited, even when listed.
	SecretNames []string
	// Dir is the process's working directory ("" = the gateway's).
	Dir string
	// AuthMethod is the id of the authentication method to use when the
	// agent answers session/new with "authentication required" (an
	// env-var method whose variable is in the agent's environment). "" uses the first method the agent offers.
	AuthMethod string
	// NoMCP keeps the gateway's MCP servers from the agent: session/new
	// and session/load send an empty mcpServers (agents.list.NAME.mcp:
	// false).
	NoMCP bool
	// Sandbox, if set, runs the agent in a sandbox of its own (package
	// sandbox): Dir is its working directory inside, and the process's
	// whole tree ends with it. Nil runs it as the gateway's own user
	// (agents.sandbox: off, and the tests of this package).
	Sandbox *sandbox.Spec
}

// Options configure a Process.
type Options struct {
	Logger *slog.Logger
	// Frames, if set, receives every frame from the start. SetFrameSink
	// attaches one later (frames seen before are kept for it).
	Frames FrameSink
	// StopGrace is how long Stop waits after closing stdin and after
	// SIGTERM before escalating (default 3 s each).
	StopGrace time.Duration
	// Registry, if set, records the agent's process group while it runs.
	Registry *Registry
}

// ErrExited is returned by calls made while or after the agent process
// exited; the error also carries the exit status.
var ErrExited = errors.New("agent process exited")

// ProtocolVersion is the ACP version the gateway speaks.
const ProtocolVersion = 1

// Process is one running agent. Its methods are safe for concurrent use.
type Process struct {
	spec  Spec
	log   *slog.Logger
	grace time.Duration

	cmd   *exec.Cmd
	box   *sandbox.Wrapped // its sandbox, nil when it has none
	env   []string         // the agent's environment
	stdin io.WriteCloser
	tap   *tap
	info  acp.InitializeResponse
	// withheld are the variables Environ kept from it.
	withheld []Withheld

	mu       sync.Mutex // guards the fields below
	sessions map[string]*Session
	early    map[string][]projector.Update // updates for sessions not registered yet
	closed   map[string]bool               // sessions closed by Close: their updates are dropped
	waiting  map[string]chan struct{}      // url questions waiting, by elicitation id
	children map[string]*child             // subagents' sessions, by id (subagent.go)

	exited  chan struct{} // closed when the process has been reaped
	exitErr error         // set before exited is closed
	wg      sync.WaitGroup
}

// Start spawns the agent in its own process group and runs initialize. The
// process lives until Stop or Kill (or it exits); ctx bounds only the
// start-up.
func Start(ctx context.Context, spec Spec, o Options) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, errors.New("agent command is empty")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("agent", spec.Name)
	p := &Process{
		spec:     spec,
		log:      log,
		grace:    o.StopGrace,
		sessions: map[string]*Session{},
		early:    map[string][]projector.Update{},
		closed:   map[string]bool{},
		waiting:  map[string]chan struct{}{},
		children: map[string]*child{},
		exited:   make(chan struct{}),
	}
	if p.grace <= 0 {
		p.grace = 3 * time.Second
	}
	env, withheld := spec.Environ(os.Environ())
	for _, w := range withheld {
		log.Warn("not passing an environment variable to the agent", "variable", w.Name, "why", w.Why)
	}
	p.env, p.withheld = env, withheld
	argv := spec.Command
	if spec.Sandbox != nil {
		if why := dirProblem(spec.Dir); why != "" {
			return nil, fmt.Errorf("start agent %q: its working directory (cwd) %s %s", spec.Name, spec.Dir, why)
		}
		box, err := spec.Sandbox.Wrap(ctx, sandbox.Proc{Command: spec.Command, Dir: spec.Dir, Env: env}, log)
		if err != nil {
			return nil, fmt.Errorf("start agent %q: %w", spec.Name, err)
		}
		p.box = box
		argv, env = box.Args, box.Env
		log.Debug("agent sandboxed", "mounts", box.Mounts)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		p.closeSandbox()
		return nil, fmt.Errorf("agent stdin: %w", err)
	}
	// Our own pipes rather than StdoutPipe: exec.Cmd.Wait would close
	// those as soon as the process exits, losing lines not read yet.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		p.closeSandbox()
		return nil, fmt.Errorf("agent stdout: %w", err)
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		stdout.Close()
		stdoutW.Close()
		p.closeSandbox()
		return nil, fmt.Errorf("agent stderr: %w", err)
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	p.cmd, p.stdin = cmd, stdin
	// The parent-death signal (Linux) is sent when the thread that forked
	// the agent exits, not the process: the Go runtime ends a thread
	// whose goroutine exits locked to it, which may be any goroutine's.
	// So the agent is forked and reaped by one goroutine locked to its
	// thread all along; the thread lives as long as the agent.
	started := make(chan error, 1)
	pumped := make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		o.Registry.add(cmd.Process.Pid)
		started <- nil
		p.wait(pumped)
		o.Registry.remove(cmd.Process.Pid)
	}()
	err = <-started
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		stderr.Close()
		p.closeSandbox()
		// exec reports a missing directory as the program's "no such
		// file or directory".
		if why := dirProblem(spec.Dir); why != "" {
			return nil, fmt.Errorf("start agent %q: its working directory (cwd) %s %s", spec.Name, spec.Dir, why)
		}
		return nil, fmt.Errorf("start agent %q: %w", spec.Name, err)
	}
	log.Info("agent started", "pid", cmd.Process.Pid, "command", spec.Command, "sandboxed", p.box != nil)

	p.tap = &tap{
		log: log, stdin: stdin, done: make(chan struct{}), sink: o.Frames,
		onUpdate: p.update, onAnswered: p.answered, onElicit: p.elicit, onRequest: p.request, onComplete: p.elicitationComplete,
	}

	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		defer close(pumped)
		defer stdout.Close()
		p.tap.pump(stdout)
	}()
	go func() { defer p.wg.Done(); defer stderr.Close(); p.logStderr(stderr) }()

	if err := p.initialize(ctx); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

// dirProblem says what is wrong with dir as a working directory ("" if
// nothing, or if dir is "").
func dirProblem(dir string) string {
	if dir == "" {
		return ""
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case err != nil:
		return "cannot be used: " + err.Error()
	case !fi.IsDir():
		return "is not a directory"
	}
	return ""
}

// wait reaps the process and closes exited once everything it wrote has
// been read. The rest of its process group is killed so that no grandchild
// keeps the pipes open.
func (p *Process) wait(pumped <-chan struct{}) {
	err := p.cmd.Wait()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	t := time.NewTimer(500 * time.Millisecond)
	select {
	case <-pumped:
	case <-t.C:
		p.log.Warn("agent output still open after exit")
	}
	t.Stop()
	p.closeSandbox()
	if err == nil {
		err = ErrExited
	} else {
		err = fmt.Errorf("%w: %w", ErrExited, err)
	}
	p.exitErr = err
	close(p.exited)
	p.log.Info("agent exited", "pid", p.cmd.Process.Pid, "status", p.cmd.ProcessState.String())
}

// closeSandbox releases what the agent's sandbox held on the host, if it
// has one.
func (p *Process) closeSandbox() {
	if p.box == nil {
		return
	}
	if err := p.box.Close(); err != nil {
		p.log.Warn("cannot release the agent's sandbox", "err", err)
	}
}

// MaxStderrLine is how much of one line of the agent's stderr is logged;
// a longer line is logged cut, with its full length.
const MaxStderrLine = 4 << 10

// logStderr copies the agent's stderr into the log, line by line, until
// it closes. It reads everything, whatever the length of a line: an agent
// blocked on a full stderr pipe would hang its turn.
func (p *Process) logStderr(r io.Reader) {
	br := bufio.NewReaderSize(r, MaxStderrLine)
	line := make([]byte, 0, 256)
	n := 0 // bytes of the line so far, newline included
	for {
		chunk, err := br.ReadSlice('\n')
		if room := MaxStderrLine + 1 - len(line); room > 0 { // +1: the newline of a line just at the limit
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		n += len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n > 0 {
			length := n
			if err == nil {
				length-- // the newline
			}
			text := line[:min(len(line), length)]
			text = bytes.TrimSuffix(text, []byte("\r"))
			if length > MaxStderrLine {
				p.log.Info("agent stderr", "line", strings.ToValidUTF8(string(text[:MaxStderrLine]), ""), "cut", true, "length", length)
			} else {
				p.log.Info("agent stderr", "line", string(text))
			}
		}
		line, n = line[:0], 0
		if err != nil {
			return
		}
	}
}

func (p *Process) initialize(ctx context.Context) error {
	ctx, cancel := p.callContext(ctx)
	defer cancel()
	// A map, not the SDK's InitializeRequest: its ClientCapabilities has
	// no field for what ACP added since (clientCapabilities below).
	raw, err := p.tap.call(ctx, "initialize", map[string]any{
		"protocolVersion":    ProtocolVersion,
		"clientInfo":         acp.Implementation{Name: "acp-gateway", Version: "0.1"},
		"clientCapabilities": clientCapabilities(),
	})
	if err != nil {
		return p.callError("initialize", err)
	}
	var resp acp.InitializeResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("initialize: the agent's result does not parse: %w", err)
	}
	if resp.ProtocolVersion != ProtocolVersion {
		return fmt.Errorf("agent %q speaks ACP version %d; the gateway speaks %d", p.spec.Name, resp.ProtocolVersion, ProtocolVersion)
	}
	p.info = resp
	ids := make([]string, 0, len(resp.AuthMethods))
	for _, m := range resp.AuthMethods {
		ids = append(ids, authMethodID(m))
	}
	p.log.Info("agent initialized", "loadSession", resp.AgentCapabilities.LoadSession, "authMethods", ids)
	return nil
}

// TakesImages reports whether the agent accepts images in prompts.
func (p *Process) TakesImages() bool { return p.info.AgentCapabilities.PromptCapabilities.Image }

// CanLoad reports whether the agent can resume sessions (session/load).
func (p *Process) CanLoad() bool { return p.info.AgentCapabilities.LoadSession }

// SetFrameSink attaches the raw frame sink (the session's event log); the
// frames seen since start are passed to it first, in order.
func (p *Process) SetFrameSink(s FrameSink) { p.tap.setSink(s) }

// Exited is closed when the agent process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err returns why the process exited, nil while it runs.
func (p *Process) Err() error {
	select {
	case <-p.exited:
		return p.exitErr
	default:
		return nil
	}
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Withheld returns the variables of its configuration or of the gateway's
// environment the agent was started without, and why (Spec.Environ).
func (p *Process) Withheld() []Withheld { return slices.Clone(p.withheld) }

// callContext returns a context that also ends when the process exits.
func (p *Process) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-p.exited:
			cancel(p.exitErr)
		case <-ctx.Done():
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// callError turns an error of a call into one that says what failed, preferring
// the exit of the process when that is the cause.
func (p *Process) callError(method string, err error) error {
	select {
	case <-p.tap.done:
		// The agent closed its output: it is exiting. Wait briefly so the
		// error says so (wait needs the reap first).
		t := time.NewTimer(2 * time.Second)
		select {
		case <-p.exited:
		case <-t.C:
		}
		t.Stop()
	default:
	}
	if perr := p.Err(); perr != nil {
		return fmt.Errorf("%s: %w", method, perr)
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return &CallError{Method: method, Code: re.Code, Says: agentWords(re), err: err}
	}
	return fmt.Errorf("%s: %w", method, err)
}

// CallError is a call the agent answered with a JSON-RPC error.
type CallError struct {
	// Method is the call ("session/new"), Code the error's code.
	Method string
	Code   int
	// Says is the agent's own text: the error's message, and the
	// details its data gives (as Gemini's "details", Auggie's message).
	// It is the agent's: untrusted, not cut.
	Says string
	err  error
}

func (e *CallError) Error() string { return e.Method + ": " + e.err.Error() }
func (e *CallError) Unwrap() error { return e.err }

// agentWords is the text of an agent's error: its message, then the
// strings its data holds under "details", "message" or "error" (or the
// data itself when it is a string), each once.
func agentWords(re *acp.RequestError) string {
	parts := []string{strings.TrimSpace(re.Message)}
	add := func(v any) {
		if s, ok := v.(string); ok {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
				parts = append(parts, s)
			}
		}
	}
	switch d := re.Data.(type) {
	case string:
		add(d)
	case map[string]any:
		for _, k := range []string{"details", "message", "error"} {
			add(d[k])
		}
	}
	if parts[0] == "" {
		parts = parts[1:]
	}
	return strings.Join(parts, ": ")
}

// NoAuthError: the agent asked for authentication (its error is wrapped)
// and offers no method the gateway could use.
type NoAuthError struct {
	Agent string
	err   error
}

func (e *NoAuthError) Error() string {
	return fmt.Sprintf("agent %q requires authentication and offers no method: %v", e.Agent, e.err)
}
func (e *NoAuthError) Unwrap() error { return e.err }

// Stop ends the process politely: close stdin, then SIGTERM the process
// group, then SIGKILL, waiting StopGrace between steps (some agents ignore
// stdin EOF). It returns when the process has exited, or when ctx ends.
func (p *Process) Stop(ctx context.Context) error {
	_ = p.stdin.Close()
	steps := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	for _, sig := range steps {
		t := time.NewTimer(p.grace)
		select {
		case <-p.exited:
			t.Stop()
			p.wg.Wait()
			return nil
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		p.log.Info("agent did not exit; signalling its process group", "signal", sig.String())
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
	select {
	case <-p.exited:
		p.wg.Wait()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Kill ends the process group at once and waits for it to be reaped.
func (p *Process) Kill() {
	_ = p.stdin.Close()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	p.wg.Wait()
}
