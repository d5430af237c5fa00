package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Platform is the adapter's platform name, the Platform of its ThreadRefs.
const Platform = "web"

// Channel is the only channel of the web chat, the Channel of its
// ThreadRefs.
const Channel = "local"

// DefaultListen is the address New listens on when Options.Listen is empty.
const DefaultListen = "127.0.0.1:8484"

// Timeouts of the server.
const (
	// replyWait is how long an answer request waits for the gateway's
	// private reply before it returns without one.
	replyWait = time.Second
	// shutdownWait bounds the graceful shutdown when Run's context ends.
	shutdownWait = 5 * time.Second
	// heartbeatInterval is how often an idle event stream sends a comment.
	heartbeatInterval = 15 * time.Second
)

// Options configure an Adapter.
type Options struct {
	// Listen is the host:port to listen on; "" means DefaultListen. Port 0
	// picks a free port (see Addr and URL).
	Listen string
	// Listener, if set, is where Run serves, instead of listening on
	// Listen: the program binds it first, to pick another port while
	// nothing runs yet. Run closes it.
	Listener net.Listener
	// Token, if set, admits its holder, one person whose Author.ID is
	// OwnerID ("web:owner"). Every /api request then needs a token of
	// Token or Users, as "Authorization: Bearer <token>" or
	// "?token=<token>".
	Token string
	// Users maps names to tokens: each token admits one person, whose
	// Author.ID is IDPrefix + name ("web:ann") and whose name is the
	// author shown. Names are letters, digits, '-' and '_'; tokens must
	// differ. Without Token and Users, Run serves only on loopback, and
	// everyone there is the one local user, LocalID ("web:local"),
	// unless LocalToken is set.
	Users map[string]string
	// LocalToken, if set, admits its holder as the one local user,
	// LocalID ("web:local"), as everyone is on loopback without any
	// token: the gateway makes one at its first start so that other
	// accounts of the machine cannot use the chat (see LoadToken). URL
	// carries it when Token is not set.
	LocalToken string
	// TokenHelp says where a person finds the token, in the answer to a
	// request without a valid one (such as "open the address the gateway
	// printed at start"). "" says only that a token is needed.
	TokenHelp string
	// Agents are the agents a new thread may pick, by name (agents.list),
	// the default first; the page offers them when there are two or
	// more. The gateway checks a pick (channels.Inbound.Agent).
	Agents []string
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger
	// StateFile, if set, is a JSON file that keeps the threads and their
	// messages across restarts: New loads it, and Run saves changes to it
	// (at most every 500 ms, and once more when it returns). "" keeps
	// everything in memory only. The file's directory must exist.
	StateFile string
	// MaxThreadsInMemory bounds how many threads keep their messages in
	// memory (0: 200). With StateFile, the least recently active of the
	// others are kept in files beside it (a directory named after it,
	// web-chat.threads/) and read back when used; without, they are
	// forgotten. A thread whose turn runs stays in memory.
	MaxThreadsInMemory int
	// FilesDir, if set, is the directory that keeps the files the
	// gateway puts into threads (Upload), one file per upload; it is
	// made (mode 0700) at the first upload. "" keeps them in memory
	// only, lost at a restart.
	FilesDir string
	// Shared, if set, is the web chat's state shared with other gateways
	// serving the same chat (the edges of a cluster): every change is
	// written there, and Run applies every gateway's changes, in order,
	// to this one's threads and live streams, starting from the shared
	// state (Run listens once it has it all). StateFile is then not
	// used, nor FilesDir when Shared also keeps the files (SharedFiles);
	// otherwise the files the agents send stay in FilesDir of the
	// gateway that received them.
	Shared Shared
}

// Adapter is the local web chat: an HTTP server with a JSON API, a live
// event stream and an embedded page, and the channels.Adapter on top of the
// same in-memory threads, optionally kept in a state file. Create it with
// New; its methods are safe for concurrent use. Post, Edit, Typing,
// StopTyping and Prompt work on the state whether or not Run is serving.
type Adapter struct {
	o         Options
	keys      []tokenKey // the tokens of Token and Users
	log       *slog.Logger
	st        *store
	files     *files
	saver     *persister // nil without a state file, or when saving is off
	replyWait time.Duration
	heartbeat time.Duration
	bodyWait  time.Duration // bodyReadWait; tests shorten it
	ready     chan struct{} // closed once Run listens
	health    channels.Health
	picks     atomic.Pointer[[]string] // SetAgents's list, over Options.Agents

	// threadFiles is the most bytes of files kept for one thread
	// (0: maxThreadFileBytes; tests set less).
	threadFiles int64

	mu      sync.Mutex // guards the fields below
	addr    net.Addr   // set once Run listens
	started bool       // Run was called with a live context
}

var (
	_ channels.Adapter       = (*Adapter)(nil)
	_ channels.Editor        = (*Adapter)(nil)
	_ channels.Typer         = (*Adapter)(nil)
	_ channels.TypingStopper = (*Adapter)(nil)
	_ channels.Prompter      = (*Adapter)(nil)
	_ channels.Uploader      = (*Adapter)(nil)
	_ channels.Checker       = (*Adapter)(nil)
	_ channels.Titler        = (*Adapter)(nil)
	_ channels.ToolDetailer  = (*Adapter)(nil)
	_ channels.AgentShower   = (*Adapter)(nil)
)

// New returns an adapter for o. When o.StateFile is set, it loads the
// threads saved there (blocking on the read); a missing file means no
// threads, and a file it cannot use never fails New: it is logged, and a
// corrupt one is moved aside to StateFile+".corrupt". New does no other
// I/O; Run listens.
func New(o Options) *Adapter {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{
		o:         o,
		keys:      keysFor(o),
		log:       log,
		st:        newStore(),
		files:     &files{dir: o.FilesDir},
		replyWait: replyWait,
		heartbeat: heartbeatInterval,
		bodyWait:  bodyReadWait,
		ready:     make(chan struct{}),
	}
	if o.MaxThreadsInMemory > 0 {
		a.st.maxInMemory = o.MaxThreadsInMemory
	}
	if o.Shared != nil {
		a.st.shared = o.Shared
		a.st.sharedErr = func(err error) { log.Warn("web chat: a change was not shared", "err", err) }
		if f, ok := o.Shared.(SharedFiles); ok {
			a.files.shared = f
		}
		a.st.afterApply = a.removeGone
	} else if o.StateFile != "" {
		p := newPersister(o.StateFile, a.st, log)
		if p.load() {
			a.saver = p
			a.st.changed = p.changed
		}
	}
	return a
}

// Flush writes the threads to Options.StateFile now if they changed since
// the last save, blocking on disk I/O. Run saves by itself; Flush is for
// changes made after Run returned. It returns the error of writing the
// file, and nil without a state file or when saving is off for this run
// (the file could not be read, or is of a newer version).
func (a *Adapter) Flush() error {
	if a.saver == nil {
		return nil
	}
	return a.saver.flush()
}

// Run listens on Options.Listen (or takes Options.Listener) and serves the page and the API, delivering
// what people write and click to h, until ctx ends; then it shuts the
// server down gracefully (open event streams end, requests in flight get
// up to five seconds) and returns nil. With a state file, Run also owns
// the saving: changes are written at most every 500 ms from a goroutine of
// its own, and once more before Run returns; a failed save is logged and
// retried. It returns an error when it cannot
// listen or the server fails, when called a second time, and when the
// address is not loopback-only and neither Token nor Users is set. h is called
// on the goroutine of the HTTP request, with Run's context, and should not
// block for long: the request waits for it.
func (a *Adapter) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	if ctx.Err() != nil {
		if a.o.Listener != nil {
			a.o.Listener.Close()
		}
		return nil
	}
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("web: Run called twice")
	}
	a.started = true
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx) // also ended when the shared state fails
	defer cancel()
	if a.saver != nil {
		// Stopped last, after the server: the final save has every
		// change of the requests in flight.
		stop := make(chan struct{})
		var sw sync.WaitGroup
		sw.Go(func() { a.saver.run(stop) })
		defer func() {
			close(stop)
			sw.Wait()
		}()
	}

	followErr := make(chan error, 1)
	if a.o.Shared != nil {
		// Stopped after the server: requests in flight wait for their
		// changes to come back.
		fctx, fcancel := context.WithCancel(ctx)
		var fw sync.WaitGroup
		defer func() {
			fcancel()
			fw.Wait()
		}()
		caught := make(chan struct{})
		fw.Go(func() {
			err := a.o.Shared.Follow(fctx, a.applyShared, func() {
				a.purgeOrphans(fctx)
				close(caught)
			})
			if err == nil && fctx.Err() == nil {
				err = errors.New("stopped")
			}
			followErr <- err
		})
		select {
		case <-caught:
		case err := <-followErr:
			if ctx.Err() == nil {
				if a.o.Listener != nil {
					a.o.Listener.Close()
				}
				return fmt.Errorf("web: shared state: %w", err)
			}
		case <-ctx.Done():
		}
	}

	ln := a.o.Listener
	if ln == nil {
		var lc net.ListenConfig
		var err error
		if ln, err = lc.Listen(ctx, "tcp", a.o.Listen); err != nil {
			return fmt.Errorf("web: listen: %w", err)
		}
	}
	loopback := isLoopback(ln.Addr())
	if !loopback && (a.o.Token == "" && len(a.o.Users) == 0) {
		ln.Close()
		return fmt.Errorf("web: %s is reachable beyond this machine and no access token is set (Options.Token or Options.Users): refusing to serve a chat anyone could use", ln.Addr())
	}
	s := &server{a: a, ctx: ctx, h: h, loopback: loopback}
	srv := &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelDebug),
	}
	a.mu.Lock()
	a.addr = ln.Addr()
	a.mu.Unlock()
	a.health.Set(true, "")
	defer a.health.Set(false, "not listening")
	close(a.ready)
	a.log.Info("web chat listening", "url", a.url(false))

	var wg sync.WaitGroup
	served := make(chan error, 1)
	wg.Go(func() { served <- srv.Serve(ln) })
	defer wg.Wait()
	var stop error
	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("web: serve: %w", err)
	case err := <-followErr:
		if ctx.Err() == nil {
			stop = fmt.Errorf("web: shared state: %w", err)
		}
		cancel()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		a.log.Warn("web chat: graceful shutdown timed out; closing connections", "err", err)
		srv.Close()
	}
	s.sockets.Wait() // they end with ctx
	return stop
}

// purgeOrphans removes from the shared state the records of threads
// whose details are gone (written while the thread was being deleted).
func (a *Adapter) purgeOrphans(ctx context.Context) {
	for _, prefix := range a.st.dropOrphans() {
		if err := a.o.Shared.Purge(ctx, prefix); err != nil {
			a.log.Warn("web chat: cannot remove the records of a deleted thread", "keys", prefix, "err", err)
		}
	}
}

// applyShared applies a change of the shared state (Options.Shared).
func (a *Adapter) applyShared(c Change) {
	if err := a.st.applyChange(c); err != nil {
		a.log.Warn("web chat: a shared change that cannot be read; left out", "rev", c.Rev, "err", err)
	}
}

// Check reports whether the web chat is listening.
func (a *Adapter) Check() error { return a.health.Check() }

// Ready returns a channel that is closed once Run listens; Addr and URL are
// known from then on.
func (a *Adapter) Ready() <-chan struct{} { return a.ready }

// Addr returns the host:port Run listens on, "" before it listens.
func (a *Adapter) Addr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.addr == nil {
		return ""
	}
	return a.addr.String()
}

// URL returns the address of the page for a browser on this machine, with
// "?token=" when Options.Token or Options.LocalToken is set (people of
// Options.Users add their own token), or "" before Run listens. An
// unspecified listen address (":8484", "0.0.0.0") is shown as 127.0.0.1.
func (a *Adapter) URL() string { return a.url(true) }

func (a *Adapter) url(withToken bool) string {
	a.mu.Lock()
	addr := a.addr
	a.mu.Unlock()
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := "127.0.0.1"
	if !tcp.IP.IsUnspecified() {
		host = tcp.IP.String()
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, fmt.Sprint(tcp.Port)), Path: "/"}
	tok := a.o.Token
	if tok == "" {
		tok = a.o.LocalToken
	}
	switch {
	case tok == "":
	case withToken:
		u.RawQuery = url.Values{"token": {tok}}.Encode()
	default:
		u.RawQuery = "token=REDACTED"
	}
	return u.String()
}

// isLoopback reports whether addr only accepts connections from this
// machine.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Limits reports the web chat's limits: no length limit, edits every
// 250 ms, and a typing indicator that stays until StopTyping. No I/O.
func (a *Adapter) Limits() channels.Limits { return Limits() }

// EditInterval is how often a message may change on the page: 30 times a
// second. A local page has no rate limit, so a reply streams as its text
// comes (agents send a piece every 20–50 ms; the page shows the changes
// once per animation frame); Discord's pace of an edit a second, or the
// earlier 250 ms, showed it in steps. Each edit renders the message again:
// BenchmarkStream100Threads has the cost.
const EditInterval = 33 * time.Millisecond

// Limits returns the web chat's limits, which every Adapter reports: no
// length limit, edits at most every EditInterval, and files of up to
// 64 MiB.
func Limits() channels.Limits {
	return channels.Limits{MinEditInterval: EditInterval, MaxUploadBytes: maxUploadBytes}
}
