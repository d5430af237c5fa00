package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/internal/flock"
	"github.com/acpgw/gateway/metrics"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/workspace"
)

// runFlags are the flags of run and check.
type runFlags struct {
	config string
	sets   multi
	// environ is the environment as it was when the configuration was
	// first loaded, before scrubEnv removed the secrets from it: every
	// load, reloads too, reads it.
	environ []string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "YAML configuration `file` (default: gateway.yaml if present)")
	fs.Var(&f.sets, "set", "override a setting: `key=value` (repeatable)")
}

func (f *runFlags) load() (config.Config, error) {
	if f.environ == nil {
		f.environ = os.Environ()
	}
	return f.options().Load()
}

func (f *runFlags) options() config.LoadOptions {
	return config.LoadOptions{Path: f.config, Sets: f.sets, Platforms: platforms(), Environ: f.environ}
}

// platforms are the chat platforms of this build, each with its adapter
// package's config section, in the order the configuration shows them.
func platforms() []config.Platform {
	return []config.Platform{
		{Name: web.Platform, Defaults: web.DefaultConfig()},
		{Name: discord.Platform, Defaults: discord.DefaultConfig()},
		{Name: slack.Platform, Defaults: slack.DefaultConfig()},
	}
}

// runGateway is `gateway run`: every configured channel, or the local web
// chat with the demo agent when none is. It returns when ctx ends, after a
// graceful shutdown (turns cancelled, records flushed, agents stopped).
func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := f.load()
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log, stderr)
	logScrubbed(log, scrubEnv(cfg))
	g, err := start(ctx, cfg, f, log, hooks{})
	if err != nil {
		return err
	}
	for _, u := range g.urls {
		fmt.Fprintf(stdout, "gateway: %s\n", u)
	}
	return g.wait()
}

// hooks let tests observe the program.
type hooks struct {
	// reloaded is told about each applied configuration reload.
	reloaded chan struct{}
}

// gateway is a running program: the router, its adapters and servers.
type gateway struct {
	log     *slog.Logger
	router  *session.Router
	spaces  *workspace.Manager // the threads' workspaces (workspace.keep)
	data    *dataDir
	metrics *metrics.Metrics
	urls    []string
	webURL  string
	web     *web.Adapter // the web chat, if it runs
	// metricsAddr is where /metrics and /healthz are served.
	metricsAddr string
	// deny are the gateway's own listeners, kept from every agent.
	deny []string
	// reloaded, if set, is told about each applied reload (tests).
	reloaded chan struct{}
	errs     chan error
	wg       sync.WaitGroup
	cancel   context.CancelFunc
}

// start opens the store, builds the router and starts every adapter and
// the metrics server. Everything stops when ctx ends; wait returns then.
func start(ctx context.Context, cfg config.Config, f runFlags, log *slog.Logger, h hooks) (*gateway, error) {
	sandboxNote, err := startSandbox(cfg, log)
	if err != nil {
		return nil, err
	}
	data, err := openData(ctx, cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckDirs(); err != nil {
		// Not fatal: the other agents work, and the directory may come
		// later (a mount); this agent's start says the same.
		log.Warn("an agent cannot start", "err", err)
	}
	st := data.st
	// Ports first: a start that fails here has nothing to shut down.
	platforms := cfg.Platforms()
	var webLn, metricsLn net.Listener
	if slices.Contains(platforms, "web") {
		if webLn, err = listen(cfg, "channels.web.listen", config.SectionOf[web.Config](cfg, web.Platform).Listen, false, log); err != nil {
			data.Close()
			return nil, err
		}
	}
	if addr := cfg.Metrics.Listen; addr != "" {
		if metricsLn, err = listen(cfg, "metrics.listen", addr, true, log); err != nil {
			if webLn != nil {
				webLn.Close()
			}
			data.Close()
			return nil, err
		}
	}
	m := metrics.New()
	ctx, cancel := context.WithCancel(ctx)
	g := &gateway{log: log, data: data, metrics: m, errs: make(chan error, 8), cancel: cancel, reloaded: h.reloaded}
	g.deny = ownListeners(cfg, addrs(webLn, metricsLn)...)
	// closeListeners is for the failures below, before the servers own them.
	closeListeners := func() {
		for _, ln := range []net.Listener{webLn, metricsLn} {
			if ln != nil {
				ln.Close()
			}
		}
	}

	adapters := map[string]channels.Adapter{}
	deps := adapterDeps{
		webLn: webLn,
		// A mention from someone without access opens no thread.
		// The router is made below, before any event arrives.
		admit: func(ctx context.Context, in channels.Inbound) bool { return g.router.Admit(ctx, in) },
		// Threads bound before a restart keep working without a new
		// mention.
		known: func(ctx context.Context, t channels.ThreadRef) bool {
			_, ok, err := st.Binding(ctx, t)
			return err == nil && ok
		},
	}
	for _, p := range platforms {
		a, err := newAdapter(ctx, cfg, p, log, deps)
		if err != nil {
			cancel()
			closeListeners()
			data.Close()
			return nil, err
		}
		adapters[p] = a
	}
	spaces, err := workspace.New(workspace.Options{DataDir: cfg.DataDir, Keep: cfg.Workspace.Keep, Log: log.With("part", "workspace")})
	if err != nil {
		cancel()
		closeListeners()
		data.Close()
		return nil, err
	}
	g.spaces = spaces
	o := sessionOptions(cfg, st, data.agents, spaces, m, log, openPlatforms(platforms))
	o.Agent = agentSpecs(cfg, g.deny)
	g.router = session.New(o)
	m.Threads(g.router.Threads)
	for p, a := range adapters {
		g.router.Add(p, a)
		if c, ok := channels.As[channels.Checker](a); ok {
			m.Connected(p, c.Check)
		}
		log.Info("channel enabled", "platform", p, "capabilities", channels.CapsOf(a).Names())
	}

	g.wg.Go(func() { g.errs <- g.router.Run(ctx) })
	for p, a := range adapters {
		g.wg.Go(func() {
			if err := a.Run(ctx, g.router.Handle); err != nil && ctx.Err() == nil {
				// Most of the adapters' errors start with their name.
				if !strings.HasPrefix(err.Error(), p+":") {
					err = fmt.Errorf("%s: %w", p, err)
				}
				g.errs <- err
				return
			}
			g.errs <- nil
		})
		if w, ok := a.(*web.Adapter); ok {
			select {
			case <-w.Ready():
				g.webURL = w.URL()
				g.web = w
				g.urls = append(g.urls, "web chat at "+w.URL())
			case err := <-g.errs:
				cancel()
				g.wg.Wait()
				if metricsLn != nil {
					metricsLn.Close()
				}
				data.Close()
				return nil, err
			}
		}
	}
	if ln := metricsLn; ln != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
		mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { ready(w, adapters, sandboxNote) })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		g.metricsAddr = ln.Addr().String()
		g.urls = append(g.urls, "metrics at http://"+g.metricsAddr+"/metrics")
		g.wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				g.errs <- fmt.Errorf("metrics: %w", err)
			}
		})
		g.wg.Go(func() {
			<-ctx.Done()
			sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			_ = srv.Shutdown(sctx)
		})
	}
	if path := cfg.File(); path != "" {
		g.wg.Go(func() {
			o := f.options()
			o.Path = path
			err := config.Watch(ctx, o, func(c config.Config) {
				logScrubbed(log, scrubEnv(c))
				g.reload(c)
			}, func(err error) {
				log.Error("configuration change rejected; keeping the running settings", "err", err)
			})
			if err != nil && ctx.Err() == nil {
				log.Warn("configuration is not watched for changes", "err", err)
			}
		})
	}
	return g, nil
}

// routerSettings are the router's settings a reload changes (as gateway
// run and a cluster worker reload them): the thread policies, stop words,
// access, the agents (deny kept from every sandboxed agent) and their
// workspace settings.
func routerSettings(c config.Config, deny []string) session.Settings {
	return session.Settings{
		Policy: func(t channels.ThreadRef, space string) session.Policy {
			p := c.Policy(config.Scope{Platform: t.Platform, Space: space, Channel: t.Channel})
			p.Agents = pickable(c)
			return p
		},
		Abort:          &c.Abort,
		Access:         c.Access,
		Agent:          agentSpecs(c, deny),
		AgentWorkspace: c.AgentWorkspace,
	}
}

// reload applies the settings that can change without a restart: the
// stream, typing, busy and permission policies, stop words, access, the
// agents (and the web chat's list of them), and the workspace settings of
// threads whose workspace is made after it.
func (g *gateway) reload(c config.Config) {
	g.router.Configure(routerSettings(c, g.deny))
	if g.web != nil {
		// The web chat's /api/me offers the agents a new thread may pick.
		g.web.SetAgents(pickable(c))
	}
	if g.spaces != nil {
		g.spaces.SetKeep(c.Workspace.Keep)
	}
	if err := c.CheckDirs(); err != nil {
		g.log.Warn("an agent cannot start", "err", err)
	}
	g.log.Info("configuration reloaded")
	if g.reloaded != nil {
		g.reloaded <- struct{}{}
	}
}

// wait blocks until the gateway stopped; the first error of a part stops
// the rest.
func (g *gateway) wait() error {
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	var first error
	for {
		select {
		case err := <-g.errs:
			if err != nil && first == nil {
				first = err
				g.log.Error("stopping the gateway", "err", err)
				g.cancel()
			}
		case <-done:
			g.cancel()
			if g.web != nil {
				// Notices posted while the router shut down, after the
				// web chat's own last save.
				if err := g.web.Flush(); err != nil {
					g.log.Warn("cannot save the web chat", "err", err)
				}
			}
			if err := g.data.Close(); err != nil && first == nil {
				first = err
			}
			g.log.Info("gateway stopped")
			return first
		}
	}
}

// ready answers /readyz: 200 when every channel is connected (or
// listening), 503 otherwise; the body has a line per channel, and the
// warning note (agents unsandboxed) first when there is one.
func ready(w http.ResponseWriter, adapters map[string]channels.Adapter, note string) {
	status := http.StatusOK
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n")
	}
	for _, p := range slices.Sorted(maps.Keys(adapters)) {
		c, ok := channels.As[channels.Checker](adapters[p])
		if !ok {
			fmt.Fprintf(&b, "%s: ok\n", p)
			continue
		}
		if err := c.Check(); err != nil {
			status = http.StatusServiceUnavailable
			fmt.Fprintf(&b, "%s: %v\n", p, err)
		} else {
			fmt.Fprintf(&b, "%s: ok\n", p)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}

// usesUserGroups reports whether Slack access rules name user groups, the
// only reason to look them up.
func usesUserGroups(c config.Config) bool {
	r, ok := c.Access["slack"]
	if !ok {
		return false
	}
	for _, id := range r.Approvers {
		if strings.HasPrefix(id, "S") { // Slack user group ids start with S
			return true
		}
	}
	return len(r.UserGroups) > 0
}

func updateMetrics(m *metrics.Metrics, tag, suppressed string) {
	m.Update(tag)
	if suppressed != "" {
		m.Suppressed(suppressed, 1)
	}
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	o := &slog.HandlerOptions{Level: c.SlogLevel()}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// runCheck is `gateway check`: load and validate the configuration, print
// it with secrets masked (and, with --explain, the effective settings of
// one thread); a non-nil error means the configuration is invalid.
func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	explain := fs.String("explain", "", "print the effective settings of a thread: `platform[/space[/channel]]`, e.g. discord/GUILD/CHANNEL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := f.load()
	if err == nil {
		err = cfg.CheckDirs()
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintln(stderr, "gateway check:", err)
		return exitCode(1)
	case err != nil:
		fmt.Fprintln(stderr, "gateway check: the configuration is invalid:")
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	if *explain != "" {
		// The explanation alone: it has its own header.
		parts := strings.SplitN(*explain, "/", 3)
		s := config.Scope{Platform: parts[0]}
		if len(parts) > 1 {
			s.Space = parts[1]
		}
		if len(parts) > 2 {
			s.Channel = parts[2]
		}
		fmt.Fprint(stdout, config.Explain(cfg, s))
		return nil
	}
	if src := cfg.File(); src != "" {
		fmt.Fprintf(stdout, "# %s: valid\n", src)
	} else {
		fmt.Fprintln(stdout, "# no configuration file: defaults (and GATEWAY_ environment, --set): valid")
	}
	fmt.Fprint(stdout, webCheckNote(cfg))
	fmt.Fprint(stdout, config.Redacted(cfg))
	warnShared(cfg, stderr)
	warnAgents(cfg, stderr)
	lines, refused := describeSandbox(cfg)
	fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	if refused != nil {
		fmt.Fprintln(stderr, "gateway check:", refused)
		return exitCode(1)
	}
	return nil
}

// dataDir is the gateway's data directory, held by one gateway at a time:
// two gateways on the same bindings would both answer in every thread.
type dataDir struct {
	st     *store.Store
	lock   *os.File        // flock held while the gateway runs; holds its pid
	agents *agent.Registry // the running agents' process groups (agents.pids)
}

// openData creates the data directory if needed (0700), takes its lock
// and opens the store in it. An existing directory that other users can
// enter is made 0700, with a log line: it holds every transcript.
func openData(ctx context.Context, dir string, log *slog.Logger) (*dataDir, error) {
	d, err := openDir(dir, log)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), log)
	if err != nil {
		d.lock.Close()
		return nil, err
	}
	d.st = st
	return d, nil
}

// openDir is openData without the store (a worker's state is on the
// cluster): the directory made and locked, the agents registry read.
func openDir(dir string, log *slog.Logger) (*dataDir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("dataDir: %w", err)
	}
	if err := privateDir(dir, log); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "gateway.lock")
	lock, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("dataDir: %w", err)
	}
	if err := flock.Try(lock); err != nil {
		lock.Close()
		if errors.Is(err, flock.ErrLocked) {
			by := ""
			if b, _ := os.ReadFile(path); len(bytes.TrimSpace(b)) > 0 {
				by = " (pid " + string(bytes.TrimSpace(b)) + ")"
			}
			return nil, fmt.Errorf("dataDir: %s is in use by another gateway%s; stop it, or give this one its own dataDir", dir, by)
		}
		return nil, fmt.Errorf("dataDir: cannot lock %s: %w", path, err)
	}
	if err := lock.Truncate(0); err == nil {
		_, _ = lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	// With the directory held, no running gateway owns the agents
	// recorded there: stop those a crash left behind.
	agents, err := agent.OpenRegistry(filepath.Join(dir, "agents.pids"), log)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("dataDir: %w", err)
	}
	return &dataDir{lock: lock, agents: agents}, nil
}

// privateDir makes dir 0700 when the group or others have any access to
// it, saying so in the log.
func privateDir(dir string, log *slog.Logger) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("dataDir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("dataDir: %s is not a directory", dir)
	}
	perm := st.Mode().Perm()
	if perm&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("dataDir: %s is open to other users (mode %04o) and cannot be made private: %w; make it 0700", dir, perm, err)
	}
	log.Warn("dataDir was open to other users; made it private (0700): it holds every transcript", "dir", dir, "mode", fmt.Sprintf("%04o", perm))
	return nil
}

// Close closes the store and releases the directory.
func (d *dataDir) Close() error {
	var err error
	if d.st != nil {
		err = d.st.Close()
	}
	d.lock.Close()
	return err
}

// pickable returns the agents a new thread may pick: agents.default
// first, then the rest of agents.list by name.
func pickable(c config.Config) []string {
	def := c.Agents.Default
	if def == "" {
		def = config.DemoAgent
	}
	names := []string{def}
	for _, n := range slices.Sorted(maps.Keys(c.Agents.List)) {
		if n != def {
			names = append(names, n)
		}
	}
	return names
}

// adapterDeps are what an adapter asks of the program it runs in.
type adapterDeps struct {
	webLn net.Listener // the web chat's listener (taken before anything starts)
	// admit answers Discord's question before a mention opens a thread,
	// and Slack's before a slash command posts.
	admit func(context.Context, channels.Inbound) bool
	// known tells Slack and Discord a thread is bound (they answer
	// there without a new mention).
	known func(context.Context, channels.ThreadRef) bool
	// askAgain has Slack ask known again about a thread it said was not
	// bound (an edge: the mention may reach another edge).
	askAgain bool
	// webShared is the web chat's state shared by the edges (gateway
	// edge); nil keeps it in this process and the state file.
	webShared web.Shared
	// identifyGate spaces the Discord identifies of the edges (gateway
	// edge: the cluster's identify bucket); nil keeps the turns in this
	// process.
	identifyGate discord.IdentifyGate
}

// newAdapter builds platform p's adapter from its config section: for
// gateway run, and for gateway edge, which serves it to the workers.
func newAdapter(ctx context.Context, cfg config.Config, p string, log *slog.Logger, d adapterDeps) (channels.Adapter, error) {
	switch p {
	case "web":
		wc := config.SectionOf[web.Config](cfg, web.Platform)
		local, help, err := webAccess(cfg, wc, log)
		if err != nil {
			return nil, err
		}
		return web.New(web.Options{
			Listen: wc.Listen, Listener: d.webLn, Token: wc.Token, Users: wc.Users, Logger: log.With("platform", "web"),
			LocalToken: local, TokenHelp: help,
			StateFile:          filepath.Join(cfg.DataDir, "web-chat.json"),
			MaxThreadsInMemory: wc.MaxThreadsInMemory,
			FilesDir:           filepath.Join(cfg.DataDir, "web-files"),
			Agents:             pickable(cfg),
			Shared:             d.webShared,
		}), nil
	case "discord":
		dc := config.SectionOf[discord.Config](cfg, discord.Platform)
		a, err := discord.New(discord.Options{
			Token: dc.Token, APIBaseURL: dc.APIBaseURL, DMs: dc.DMs, ToolStyle: dc.ToolStyle, Shard: dc.Shard, Logger: log.With("platform", "discord"),
			// Commands are registered in the allowed guilds, where
			// they appear at once.
			Guilds: cfg.Access["discord"].Guilds,
			Admit:  d.admit,
			// Threads bound by a mention before a restart.
			KnownThread: d.known,
			// Identify turns shared by the edges.
			IdentifyGate: d.identifyGate,
			// A mention keeps trying to open its thread as long as
			// output keeps trying to be delivered.
			RetryFor: cfg.Delivery.RetryFor,
		})
		if err != nil {
			return nil, fmt.Errorf("channels.discord: %w", err)
		}
		return a, nil
	case "slack":
		sc := config.SectionOf[slack.Config](cfg, slack.Platform)
		a, err := slack.New(slack.Options{
			AppToken: sc.AppToken, BotToken: sc.BotToken, APIURL: sc.APIURL,
			Streaming: sc.Streaming, CommandPrefix: sc.CommandPrefix, RecheckUnknown: d.askAgain,
			Logger:      log.With("platform", "slack"),
			KnownThread: d.known,
			Admit:       d.admit,
			UserGroups:  usesUserGroups(cfg),
			RetryFor:    cfg.Delivery.RetryFor,
		})
		if err == nil {
			// The capability set (the thread status line) is found
			// once, before the adapter is handed out.
			_, err = a.Detect(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("channels.slack: %w", err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("channels.%s: this build does not include the %s adapter yet", p, p)
}

// openPlatforms are the platforms among ps that admit people themselves:
// the web chat (token holders, or the one local user on loopback without
// tokens; it refuses to serve beyond loopback without one). access.web
// narrows it.
func openPlatforms(ps []string) []string {
	if slices.Contains(ps, "web") {
		return []string{"web"}
	}
	return nil
}

// sessionOptions are the router's options from the configuration, for
// gateway run and gateway worker.
func sessionOptions(cfg config.Config, st store.Backend, agents *agent.Registry, spaces *workspace.Manager, m *metrics.Metrics, log *slog.Logger, open []string) session.Options {
	cwd, _ := os.Getwd()
	set := routerSettings(cfg, ownListeners(cfg))
	return session.Options{
		Workspaces:     spaces,
		AgentWorkspace: set.AgentWorkspace,
		MCPDir:         filepath.Join(cfg.DataDir, "mcp"),
		Store:          st,
		EventLogDir:    filepath.Join(cfg.DataDir, "events"),
		EventLog:       cfg.EventLog,
		Agent:          set.Agent,
		Cwd:            cwd,
		Registry:       agents,
		Policy:         set.Policy,
		Access:         set.Access,
		Open:           open,
		Abort:          *set.Abort,
		Limits: session.Limits{
			MaxProcesses: cfg.Agents.MaxProcesses, IdleTimeout: cfg.Agents.IdleTimeout,
			StopGrace: cfg.Agents.StopGrace, StartTimeout: cfg.Agents.StartTimeout,
			StallTimeout: cfg.Agents.StallTimeout,
		},
		Delivery: cfg.Delivery,
		CatchUp:  session.CatchUp{Window: cfg.Channels.CatchUp},
		Threads:  cfg.Threads,
		Logger:   log,
		OnUpdate: func(tag, suppressed string) { updateMetrics(m, tag, suppressed) },
		Observer: func(p string) dispatch.Observer { return m.Channel(p) },
		OnTurnFinished: func(t channels.ThreadRef, stop string, err error) {
			m.Turn(t.Platform, stop, err)
		},
		OnAgent: func(_ channels.ThreadRef, ev string) {
			if ev == "started" {
				m.Agent(1)
			} else {
				m.Agent(-1)
			}
		},
	}
}
