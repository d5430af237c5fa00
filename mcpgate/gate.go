package mcpgate

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpgw/gateway/agent"
)

// Thread is what the tools act on: the session's chat thread. The session
// implements it. Each method blocks while it does its I/O and returns an
// error the agent is shown as the tool's failure.
type Thread interface {
	// SendFile posts f into the thread (through the thread's lane, like
	// any output) and blocks until it is posted, or given up (the error
	// says why); where the thread holds its output until its turn ends
	// (final_only), until the thread has taken it, and then held is true.
	// f has passed the workspace and size checks. Once the thread holds
	// f's bytes no more (posted, refused, given up) it calls f.Release,
	// once (it may do so after returning, for a held file).
	SendFile(ctx context.Context, f File) (held bool, err error)
	// SendMessage posts text into the thread.
	SendMessage(ctx context.Context, text string) error
	// ReadThread returns up to limit of the thread's most recent
	// messages, oldest first.
	ReadThread(ctx context.Context, limit int) ([]Message, error)
	// Ask asks the thread question, with options to pick one of (none: a
	// text answer), as the agent's question (the thread's question UI,
	// its rules of who may answer, its timeout, a stop), and blocks until
	// it is settled. An error is for a question that could not be asked.
	Ask(ctx context.Context, question string, options []string) (Answer, error)
}

// Answer is how a question asked with the ask tool ended.
type Answer struct {
	// Action is agent.Accept (Text is the answer: the chosen option or
	// what was typed), agent.Decline or agent.Cancel (stopped, timed out,
	// not shown, or the gateway stopped).
	Action string
	Text   string
}

// askResult is the ask tool's result for a: the agent reads which of
// answer, declined or cancelled it was by the first word.
func askResult(a Answer) string {
	switch a.Action {
	case agent.Accept:
		return "answer: " + a.Text
	case agent.Decline:
		return "declined: the person chose not to answer"
	}
	return "cancelled: the question got no answer (the turn was stopped, nobody answered in time, or it could not be shown)"
}

// File is a file the agent sends. Its bytes were read by the gateway half
// after the checks, so a file swapped after the check is never sent.
type File struct {
	// Name is the file's base name.
	Name string
	// Path is the resolved path inside the workspace, for logs.
	Path    string
	Caption string
	Data    []byte
	// Release gives back the bytes f counts against the thread's queue
	// (Options.MaxQueuedBytes). It may be called more than once.
	Release func()
}

// Options configure one session's server.
type Options struct {
	// Dir is the directory of the sockets (made with mode 0700 when
	// missing, e.g. DATADIR/mcp). Unix socket paths are short (about 100
	// bytes): keep it short.
	Dir string
	// Root is the thread's workspace: send_file sends only regular files
	// under it, opened through an os.Root of it (symlinks are followed
	// only where they stay inside).
	Root string
	// MaxFileBytes is the largest file send_file sends (the platform's
	// upload limit). It must be positive.
	MaxFileBytes int64
	// MaxQueuedBytes bounds the bytes of the files sent but not yet
	// posted (0 = DefaultMaxQueuedBytes): a send beyond it is refused,
	// except the first (a file of up to MaxFileBytes may always wait
	// alone).
	MaxQueuedBytes int64
	// Command is the gateway binary the agent runs as the MCP server
	// ("" = os.Executable()); it is run with the argument "mcp".
	Command string
	Logger  *slog.Logger
}

// DefaultMaxQueuedBytes is Options.MaxQueuedBytes unless set: 40
// concurrent sends of 9 MiB once held 360 MiB waiting for the lane.
const DefaultMaxQueuedBytes = 64 << 20

// requestTimeout bounds how long a connection may take to send its
// request.
const requestTimeout = 10 * time.Second

// Server is the gateway half for one session: it listens on the session's
// socket until Close.
type Server struct {
	th     Thread
	root   string   // resolved
	fsRoot *os.Root // root, open: every file is opened through it
	max    int64
	quota  int64 // Options.MaxQueuedBytes

	qmu     sync.Mutex // guards queued
	queued  int64      // bytes of files read and not yet released
	path    string
	token   string
	command string
	log     *slog.Logger

	agent agentRef // the agent process whose tree may call (SetAgent)

	ln     *net.UnixListener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Open starts listening on a new socket in o.Dir (mode 0600) for th's
// tool calls. Close stops it and removes the socket.
func Open(o Options, th Thread) (*Server, error) {
	if o.MaxFileBytes <= 0 {
		return nil, fmt.Errorf("mcpgate: MaxFileBytes must be positive, got %d", o.MaxFileBytes)
	}
	root, err := filepath.EvalSymlinks(o.Root)
	if err != nil {
		return nil, fmt.Errorf("mcpgate: workspace: %w", err)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("mcpgate: workspace: %w", err)
	}
	command := o.Command
	if command == "" {
		if command, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("mcpgate: the gateway's executable: %w", err)
		}
	}
	if err := socketDir(o.Dir); err != nil {
		return nil, err
	}
	fsRoot, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("mcpgate: workspace: %w", err)
	}
	path := filepath.Join(o.Dir, randomHex(8)+".sock")
	if len(path) > 100 {
		return nil, fmt.Errorf("mcpgate: socket path %q is too long for a unix socket (at most 100 bytes): use a shorter data directory", path)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		fsRoot.Close()
		return nil, fmt.Errorf("mcpgate: %w", err)
	}
	// The directory is 0700, so nobody else can reach the socket before
	// this.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		fsRoot.Close()
		return nil, fmt.Errorf("mcpgate: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{th: th, root: root, fsRoot: fsRoot, max: o.MaxFileBytes, quota: cmp.Or(o.MaxQueuedBytes, DefaultMaxQueuedBytes), path: path, token: randomHex(32), command: command, log: log, ln: ln, ctx: ctx, cancel: cancel}
	s.wg.Go(s.accept)
	return s, nil
}

// socketDir makes dir with mode 0700, or tightens an existing one to it.
func socketDir(dir string) error {
	if dir == "" {
		return errors.New("mcpgate: no socket directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mcpgate: socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("mcpgate: socket directory: %w", err)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// MCPServer is the entry the session passes to the agent in session/new or
// session/load: the gateway binary with "mcp", told the socket and token
// through its environment.
func (s *Server) MCPServer() agent.MCPServer {
	return agent.MCPServer{
		Name:      "gateway",
		Command:   s.command,
		Args:      []string{"mcp"},
		Env:       []string{EnvSocket + "=" + s.path, EnvToken + "=" + s.token},
		SecretEnv: []string{EnvToken},
		Trusted:   []string{ToolSendFile, ToolSendMessage, ToolReadThread, ToolAsk},
	}
}

// SocketPath is the path of the server's socket.
func (s *Server) SocketPath() string { return s.path }

// Close stops listening, removes the socket, ends the calls in flight
// (their Thread calls see ctx end) and waits for them.
func (s *Server) Close() error {
	s.cancel()
	err := s.ln.Close()
	s.wg.Wait()
	s.fsRoot.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if s.ctx.Err() == nil {
				s.log.Warn("mcp socket: accept failed; the tools stop working", "err", err)
			}
			return
		}
		s.wg.Go(func() { s.serve(c) })
	}
}

// serve answers one connection's request.
func (s *Server) serve(c *net.UnixConn) {
	defer c.Close()
	stop := context.AfterFunc(s.ctx, func() { c.Close() })
	defer stop()
	if pid, err := s.checkPeer(c); err != nil {
		s.log.Warn("mcp socket: a connection from outside the agent's process tree was refused", "pid", pid, "err", err)
		return
	}
	c.SetReadDeadline(time.Now().Add(requestTimeout))
	req, err := decodeRequest(c)
	if err != nil {
		s.log.Info("mcp socket: bad request", "err", err)
		writeLine(c, response{Error: err.Error()})
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		s.log.Warn("mcp socket: a call with a wrong token was refused", "tool", req.Tool)
		writeLine(c, response{Error: "wrong token"})
		return
	}
	resp := s.call(req)
	if resp.Error != "" {
		s.log.Info("mcp tool refused or failed", "tool", req.Tool, "err", resp.Error)
	}
	writeLine(c, resp)
}

func (s *Server) call(req request) response {
	ctx := s.ctx
	switch req.Tool {
	case ToolSendFile:
		f, err := s.readFile(req.Path)
		if err != nil {
			return response{Error: err.Error()}
		}
		f.Caption = req.Caption
		held, err := s.th.SendFile(ctx, f)
		if err != nil {
			f.Release()
			return response{Error: "send_file: " + err.Error()}
		}
		if held {
			return response{Text: fmt.Sprintf("queued %s (%d bytes): the thread shows it when the turn ends", f.Name, len(f.Data))}
		}
		return response{Text: fmt.Sprintf("sent %s (%d bytes) to the thread", f.Name, len(f.Data))}
	case ToolSendMessage:
		if err := s.th.SendMessage(ctx, req.Text); err != nil {
			return response{Error: "send_message: " + err.Error()}
		}
		return response{Text: "sent the message to the thread"}
	case ToolReadThread:
		msgs, err := s.th.ReadThread(ctx, req.Limit)
		if err != nil {
			return response{Error: "read_thread: " + err.Error()}
		}
		if len(msgs) > req.Limit {
			msgs = msgs[len(msgs)-req.Limit:]
		}
		return response{Text: fmt.Sprintf("%d messages", len(msgs)), Messages: msgs}
	case ToolAsk:
		a, err := s.th.Ask(ctx, req.Question, req.Options)
		if err != nil {
			return response{Error: "ask: " + err.Error()}
		}
		s.log.Info("the ask tool's question settled", "action", a.Action)
		return response{Text: askResult(a)}
	}
	return response{Error: fmt.Sprintf("unknown tool %q", req.Tool)}
}
