package main

// gateway edge and gateway worker: the roles of a gateway on several
// machines (package cluster). An edge holds the platform connections and
// serves each adapter to the workers (cluster/edge); a worker runs the
// agents and the threads it owns, its adapters the edges' proxies
// (cluster/remote), its state on the cluster (cluster/jsstore).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/cluster/webshare"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/metrics"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/workspace"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// roleFlags are the flags of edge and worker: run's, and the node's id.
type roleFlags struct {
	runFlags
	id string
}

// parseRole parses a role's flags and loads the configuration, which
// must name the NATS cluster.
func parseRole(role, what string, args []string, stderr io.Writer) (roleFlags, config.Config, error) {
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f roleFlags
	f.register(fs)
	fs.StringVar(&f.id, "id", "", "this "+role+"'s `id`, unique in the cluster: letters, digits, - and _ (default: host name and process id)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: gateway %s [--config FILE] [--set key=value]... [--id ID]\n\n%s\n\n", role, what)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return f, config.Config{}, err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return f, config.Config{}, fmt.Errorf("%s: unexpected argument %q", role, fs.Arg(0))
	}
	if f.id == "" {
		f.id = defaultID()
	} else if !idRE.MatchString(f.id) {
		return f, config.Config{}, fmt.Errorf("%s: --id %q: want letters, digits, - and _", role, f.id)
	}
	cfg, err := f.load()
	if err != nil {
		return f, cfg, err
	}
	if cfg.Cluster.NATS.URL == "" {
		return f, cfg, fmt.Errorf("cluster.nats.url: gateway %s needs the NATS cluster's address (nats://host:4222 or tls://host:4222, comma-separated); `gateway nats --store DIR` runs one to try it, and `gateway run` needs none", role)
	}
	return f, cfg, nil
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// defaultID is the host name and the process id, in the characters an id
// may have.
func defaultID() string {
	h, _ := os.Hostname()
	h = regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(h, "-")
	return strings.Trim(h+"-"+strconv.Itoa(os.Getpid()), "-")
}

// connectRole connects a role to the cluster's NATS.
func connectRole(cfg config.Config, role, id string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := cluster.Connect(cfg.Cluster, "gateway "+role+" "+id, nats.CustomInboxPrefix(cluster.InboxPrefix(cfg.Cluster.Name, role)))
	if err != nil {
		return nil, nil, fmt.Errorf("cluster.nats.url: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("cluster: %w", err)
	}
	return nc, js, nil
}

const edgeHelp = `Holds the platform connections of the configured channels and serves them
to the workers over NATS (cluster.nats.url): inbound events go to the
cluster's inbound stream, the workers' operations are performed here.
SIGTERM stops reading from the platforms, stores the events read (waiting
up to 30s for NATS), then finishes the operations under way.`

// runEdge is `gateway edge`: every configured channel's adapter, wrapped
// by edge.New, served until ctx ends. A Discord mention from someone the
// access rules refuse opens no thread: the edge judges it with the rules
// of the configuration (session.MayPrompt), without telling them (the
// workers tell a refused message in an existing thread). The rules follow
// the configuration file (edgeSettings).
func runEdge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, cfg, err := parseRole("edge", edgeHelp, args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log, stderr).With("edge", f.id)
	logScrubbed(log, scrubEnv(cfg))
	platforms := cfg.Platforms()
	var webLn net.Listener
	if slices.Contains(platforms, "web") {
		if err := checkEdgeWeb(config.SectionOf[web.Config](cfg, web.Platform)); err != nil {
			return err
		}
		if webLn, err = listen(cfg, "channels.web.listen", config.SectionOf[web.Config](cfg, web.Platform).Listen, false, log); err != nil {
			return err
		}
		defer webLn.Close()
	}
	metricsLn, err := listenMetrics(cfg, log)
	if err != nil {
		return err
	}
	if metricsLn != nil {
		defer metricsLn.Close() // closed by the server once it serves
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil { // the web chat's state
		return fmt.Errorf("dataDir: %w", err)
	}
	if cfg.Cluster.SigningKey == "" {
		return errors.New("cluster.signingKey: gateway edge signs every inbound event and needs its signing key (a file holding an NKey seed: `gateway nats` makes AUTH/edge-signing.nk); workers drop what is not signed")
	}
	signer, err := cluster.LoadSigner(cfg.Cluster.SigningKey)
	if err != nil {
		return err
	}
	nc, js, err := connectRole(cfg, "edge", f.id)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := moveReplicas(ctx, js, cfg.Cluster, log); err != nil {
		return err
	}
	in, err := cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: cfg.Cluster.Name, DuplicateWindow: cfg.Cluster.DuplicateWindow, Replicas: cfg.Cluster.Replicas, Signer: signer})
	if err != nil {
		return err
	}
	var shared web.Shared
	if webLn != nil {
		// Every web edge shows the same chat.
		l, err := webshare.Open(ctx, js, webshare.Options{Cluster: cfg.Cluster.Name, Replicas: cfg.Cluster.Replicas})
		if err != nil {
			return err
		}
		shared = webShared{l}
	}
	settings := newEdgeSettings(cfg, log)
	deps := adapterDeps{
		webLn: webLn,
		admit: settings.admit,
		// An edge keeps no store: whether a thread is bound is read in
		// the cluster's (a mention may have reached another edge, or
		// this one before it restarted).
		known:    jsstore.NewBoundThreads(js, jsstore.BoundOptions{Cluster: cfg.Cluster.Name, Log: log}).Bound,
		askAgain: true,
	}
	deps.webShared = shared
	// Discord's identify limit is the bot's, whichever edge identifies:
	// the edges take turns in the cluster. Every edge makes the bucket,
	// so that cluster.replicas finds it whatever the edges serve.
	identify, err := cluster.OpenTurns(ctx, js, cluster.TurnsOptions{Bucket: identifyBucket(cfg.Cluster.Name), Every: discord.IdentifyInterval, Replicas: cfg.Cluster.Replicas})
	if err != nil {
		return err
	}
	if slices.Contains(platforms, discord.Platform) {
		deps.identifyGate = identify
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := metrics.New()
	m.Node(nc.IsConnected, func() bool { return ctx.Err() != nil })
	m.Edge()
	adapters := map[string]channels.Adapter{}
	var wg sync.WaitGroup
	var webs []*web.Adapter
	errs := make(chan error, len(platforms))
	for _, p := range platforms {
		a, err := newAdapter(ctx, cfg, p, log, deps)
		if err == nil {
			var e *edge.Edge
			e, err = edge.New(ctx, edge.Options{
				Cluster: cfg.Cluster.Name, ID: f.id + "-" + p, Platform: p, Adapter: a,
				Conn: nc, JS: js, Inbound: in, Log: log.With("platform", p), Observer: m,
				Replicas: cfg.Cluster.Replicas,
				// What a new platform session missed (Discord's after a
				// restart), read from the threads the workers handled.
				CatchUp: edge.CatchUp{Window: cfg.Channels.CatchUp, Seen: func(ctx context.Context, since time.Time) ([]store.Seen, error) {
					return jsstore.SeenSince(ctx, js, cfg.Cluster.Name, p, since)
				}},
			})
			if err == nil {
				wg.Go(func() {
					err := e.Run(ctx)
					if err != nil && !strings.HasPrefix(err.Error(), p+":") {
						err = fmt.Errorf("%s: %w", p, err)
					}
					errs <- err
				})
				select {
				case <-e.Ready():
				case err = <-errs:
				}
			}
			if w, ok := a.(*web.Adapter); ok && err == nil {
				webs = append(webs, w)
				select {
				case <-w.Ready():
					fmt.Fprintf(stdout, "gateway edge: web chat at %s\n", w.URL())
				case err = <-errs:
				}
			}
		}
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		adapters[p] = a
		if c, ok := channels.As[channels.Checker](a); ok {
			m.Connected(p, c.Check)
		}
		log.Info("serving a channel to the workers", "platform", p)
	}
	settings.webs = webs
	stopWatch := settings.watch(ctx, f.runFlags)
	defer stopWatch()
	ms := serveNodeMetrics(metricsLn, m, "", func() []string { return notReadyNode(nc, ctx.Err() != nil, adapters) }, log)
	defer ms.stop()
	if u := ms.url(); u != "" {
		fmt.Fprintf(stdout, "gateway edge %s: metrics at %s\n", f.id, u)
	}
	fmt.Fprintf(stdout, "gateway edge %s: serving %s\n", f.id, strings.Join(platforms, ", "))
	var first error
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil && first == nil && ctx.Err() == nil {
			first = err
			log.Error("stopping the edge", "err", err)
			cancel()
		}
	}
	for _, w := range webs {
		// Operations performed after the adapter's last save.
		if err := w.Flush(); err != nil {
			log.Warn("cannot save the web chat", "err", err)
		}
	}
	log.Info("edge stopped")
	return first
}

const workerHelp = `Runs agents and the threads it owns: it takes events from the cluster's
inbound stream (cluster.nats.url), claims a free thread when placement
picks it (by load and by the agents it can run), and answers through the
edges. Bindings, prompts, turns and transcripts live on the cluster, so a
thread whose worker died is resumed by another. SIGTERM drains: no new
thread is claimed, running turns get cluster.drainTimeout to finish, the
rest are cancelled (the thread is told), and the threads are released.`

// runWorker is `gateway worker`.
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, cfg, err := parseRole("worker", workerHelp, args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log, stderr).With("worker", f.id)
	logScrubbed(log, scrubEnv(cfg))
	w, err := startWorker(ctx, cfg, f, log)
	if err != nil {
		return err
	}
	if u := w.metrics.url(); u != "" {
		fmt.Fprintf(stdout, "gateway worker %s: metrics at %s\n", f.id, u)
	}
	fmt.Fprintf(stdout, "gateway worker %s: running\n", f.id)
	return w.wait(ctx)
}

// worker is a running gateway worker.
type worker struct {
	cfg     config.Config
	log     *slog.Logger
	nc      *nats.Conn
	data    *dataDir
	st      *jsstore.Store
	events  *jsstore.EventLog
	router  *session.Router
	cluster *cluster.Router
	reg     *cluster.Registry
	edges   *edgePlatforms
	spaces  *workspace.Manager

	// The parts stop in order: the cluster router after the threads,
	// the proxies after both.
	sessCancel, clusterCancel, remoteCancel context.CancelFunc
	sessDone, clusterDone                   chan struct{}
	remoteWG, bg                            sync.WaitGroup

	// orphansCancel stops the scan for a dead worker's threads
	// (orphans.go), orphansDone once it stopped.
	orphansCancel context.CancelFunc
	orphansDone   chan struct{}

	// draining is set once the worker stops claiming.
	draining atomic.Bool
	// taking is held (read) while an event is handed to the session
	// router; closed, set under the write lock before the router shuts
	// down, refuses events from then on (given back to the stream: a
	// draining worker still takes the events of its threads, forwarded,
	// and the router, shut down, would drop them).
	taking  sync.RWMutex
	closed  bool
	metrics *nodeMetrics

	// deny are the gateway's own listeners, kept from every agent.
	deny []string
	// sandboxNote is what /readyz says of the agents' sandbox ("" none).
	sandboxNote string

	mu      sync.Mutex
	threads map[string]channels.ThreadRef // lease key → thread, for Lost
}

func startWorker(ctx context.Context, cfg config.Config, f roleFlags, log *slog.Logger) (_ *worker, err error) {
	sandboxNote, err := startSandbox(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckDirs(); err != nil {
		log.Warn("an agent cannot start", "err", err)
	}
	data, err := openDir(cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	w := &worker{cfg: cfg, log: log, sandboxNote: sandboxNote, data: data, threads: map[string]channels.ThreadRef{},
		sessDone: make(chan struct{}), clusterDone: make(chan struct{}), metrics: &nodeMetrics{}}
	defer func() {
		if err != nil {
			w.closeAll()
		}
	}()
	metricsLn, err := listenMetrics(cfg, log)
	if err != nil {
		return nil, err
	}
	if metricsLn != nil {
		defer func() {
			if err != nil {
				metricsLn.Close()
			}
		}()
	}
	if cfg.Cluster.EdgeKeys == "" {
		return nil, errors.New("cluster.edgeKeys: gateway worker takes only the events the edges signed and needs their public keys (a file, one a line: `gateway nats` makes AUTH/edge-keys.pub)")
	}
	edgeKeys, err := cluster.LoadEdgeKeys(cfg.Cluster.EdgeKeys)
	if err != nil {
		return nil, err
	}
	if w.nc, _, err = connectRole(cfg, "worker", f.id); err != nil {
		return nil, err
	}
	js, _ := jetstream.New(w.nc)
	c := cfg.Cluster
	if err := moveReplicas(ctx, js, c, log); err != nil {
		return nil, err
	}
	if w.st, err = jsstore.Open(ctx, js, jsstore.Options{Cluster: c.Name, Replicas: c.Replicas}); err != nil {
		return nil, err
	}
	if w.events, err = jsstore.OpenEventLog(ctx, js, jsstore.EventLogOptions{Cluster: c.Name, MaxAge: c.EventLog.MaxAge, MaxBytes: c.EventLog.MaxBytes, Replicas: c.Replicas}); err != nil {
		return nil, err
	}
	in, err := cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: c.Name, DuplicateWindow: c.DuplicateWindow, Replicas: c.Replicas})
	if err != nil {
		return nil, err
	}
	leases, err := cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: c.Name, Owner: f.id, TTL: c.LeaseTTL, Replicas: c.Replicas})
	if err != nil {
		return nil, err
	}
	if w.reg, err = cluster.OpenRegistry(ctx, js, cluster.RegistryOptions{Cluster: c.Name, TTL: c.LeaseTTL, Replicas: c.Replicas}); err != nil {
		return nil, err
	}
	remoteCtx, remoteCancel := context.WithCancel(context.WithoutCancel(ctx))
	w.remoteCancel = remoteCancel
	w.edges = &edgePlatforms{ctx: remoteCtx, cluster: c.Name, replicas: c.Replicas, nc: w.nc, js: js, log: log, byName: map[string]*remote.Adapter{}}
	spaces, err := workspace.New(workspace.Options{DataDir: cfg.DataDir, Keep: cfg.Workspace.Keep, Log: log.With("part", "workspace")})
	if err != nil {
		return nil, err
	}
	w.spaces = spaces
	m := metrics.New()
	m.Node(w.nc.IsConnected, w.draining.Load)
	m.Worker(func() int { return len(w.cluster.Owned()) })
	var agents atomic.Int64
	// The web chat admits whoever reaches it, wherever an edge serves it.
	o := sessionOptions(cfg, w.st, data.agents, spaces, m, log, openPlatforms([]string{web.Platform}))
	w.deny = ownListeners(cfg, addrs(metricsLn)...)
	o.Agent = agentSpecs(cfg, w.deny)
	o.EventLogDir = ""
	o.Shared = true
	o.OpenFrameLog = func(id string) (session.FrameLog, error) { return w.events.Writer(id), nil }
	onAgent := o.OnAgent
	o.OnAgent = func(t channels.ThreadRef, ev string) {
		if ev == "started" {
			agents.Add(1)
		} else {
			agents.Add(-1)
		}
		onAgent(t, ev)
	}
	// An idle thread left memory: the next event is placed anew.
	o.OnEvict = func(t channels.ThreadRef) {
		w.mu.Lock()
		delete(w.threads, t.String())
		w.mu.Unlock()
		if err := w.cluster.Release(context.WithoutCancel(ctx), t.String()); err != nil {
			log.Warn("cannot release an idle thread's lease; it expires", "thread", t, "err", err)
			return
		}
		log.Info("idle thread released", "thread", t)
	}
	w.router = session.New(o)
	m.Threads(w.router.Threads)
	w.edges.router = w.router
	w.edges.wg = &w.remoteWG
	if err := w.edges.watch(ctx); err != nil {
		return nil, err
	}
	w.cluster = cluster.NewRouter(cluster.RouterOptions{
		Cluster: c.Name, Conn: w.nc, Leases: leases, Registry: w.reg,
		Agents: workerAgents(cfg), Load: func() int { return int(agents.Load()) },
		Inbound: in, Log: log, Claimed: m.Claim,
		EdgeKeys: edgeKeys, Unsigned: func(ev cluster.Event) bool { return wire.IsTakeOver(ev.Data) },
		Handle: func(ctx context.Context, ev cluster.Event) error {
			w.taking.RLock()
			defer w.taking.RUnlock()
			if w.closed {
				return errors.New("the worker is stopping")
			}
			if in, err := wire.DecodeInbound(ev.Data); err == nil {
				w.mu.Lock()
				_, known := w.threads[ev.Thread]
				w.threads[ev.Thread] = in.Thread
				w.mu.Unlock()
				if !known {
					// New here: what a worker that died left in it, told
					// through the platform's proxy (served first if its
					// edge's announcement has not been read yet).
					if _, err := w.edges.add(in.Thread.Platform); err != nil {
						w.mu.Lock()
						delete(w.threads, ev.Thread)
						w.mu.Unlock()
						return err
					}
					w.router.Adopt(ctx, in.Thread)
				}
				if in.TakeOver {
					// It only brought the thread here (orphans.go).
					log.Info("taking a thread over", "thread", ev.Thread, "event", ev.ID, "new", !known)
					return nil
				}
			}
			log.Info("taking an event", "thread", ev.Thread, "event", ev.ID)
			return w.edges.deliver(ctx, ev)
		},
		// Another worker owns the thread now: stop acting for it, on a
		// goroutine of the worker's (the renewals go on meanwhile).
		Lost: func(thread string) {
			m.LeaseLost()
			w.mu.Lock()
			ref, ok := w.threads[thread]
			delete(w.threads, thread)
			w.mu.Unlock()
			if ok {
				log.Warn("lost a thread's lease; another worker owns it now", "thread", ref)
				w.bg.Go(func() { w.router.Disown(ref) })
			}
		},
	})
	sessCtx, sessCancel := context.WithCancel(context.WithoutCancel(ctx))
	w.sessCancel = sessCancel
	go func() { defer close(w.sessDone); _ = w.router.Run(sessCtx) }()
	clusterCtx, clusterCancel := context.WithCancel(context.WithoutCancel(ctx))
	w.clusterCancel = clusterCancel
	go func() {
		defer close(w.clusterDone)
		if err := w.cluster.Run(clusterCtx); err != nil {
			log.Error("the cluster router stopped", "err", err)
		}
	}()
	orphansCtx, orphansCancel := context.WithCancel(context.WithoutCancel(ctx))
	w.orphansCancel, w.orphansDone = orphansCancel, make(chan struct{})
	go func() {
		defer close(w.orphansDone)
		orphans{st: w.st, leases: leases, in: in, ttl: c.LeaseTTL, draining: w.draining.Load, log: log}.run(orphansCtx)
	}()
	w.watchConfig(ctx, f)
	w.metrics = serveNodeMetrics(metricsLn, m, w.sandboxNote, func() []string { return notReadyNode(w.nc, w.draining.Load(), nil) }, log)
	return w, nil
}

// workerAgents are the agents a worker announces it can run: the names
// of agents.list and the demo agent.
func workerAgents(cfg config.Config) []string {
	names := pickable(cfg)
	if !slices.Contains(names, config.DemoAgent) {
		names = append(names, config.DemoAgent)
	}
	return names
}

// wait runs until ctx ends (SIGTERM), then drains: no new event is taken,
// the running turns get cluster.drainTimeout to finish, the threads are
// shut down (what still runs is cancelled and told), and the leases are
// released.
func (w *worker) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-w.clusterDone:
		w.log.Error("the worker cannot route events; stopping")
	}
	w.draining.Store(true)
	w.orphansCancel()
	<-w.orphansDone
	w.log.Info("draining: claiming no new thread, letting running turns finish", "timeout", w.cfg.Cluster.DrainTimeout)
	w.cluster.StopClaiming()
	w.drain(w.cfg.Cluster.DrainTimeout)
	w.taking.Lock()
	w.closed = true
	w.taking.Unlock()
	w.sessCancel()
	<-w.sessDone
	w.bg.Wait()
	w.clusterCancel()
	<-w.clusterDone
	w.log.Info("worker stopped: threads released")
	w.closeAll()
	return nil
}

// drain waits until no prompt of a thread of this worker is marked in
// the store, or timeout: a prompt's mark stays until its turn's end was
// delivered (thread/machine_inbound.go, thread/owner/marks.go), so a finished turn still on its way to
// the platform is waited for too. (A count of the turns finished and not
// delivered, kept beside the marks, leaked and held every drain for its
// whole timeout.)
func (w *worker) drain(timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	settled := func() bool {
		for time.Now().Before(deadline) {
			if w.running() == 0 {
				return true
			}
			<-tick.C
		}
		return false
	}
	if settled() {
		// No turn runs, so nothing waits for a click: refuse what comes
		// from now on (given back to the stream, for the thread's next
		// owner), then wait again for a prompt handed over while the
		// marks were read, which its thread marks once it takes it
		// (after Handle returned): left marked, the next owner would
		// take it over as cut off by a worker that went away.
		w.taking.Lock()
		w.closed = true
		w.taking.Unlock()
		<-tick.C
		if settled() {
			w.log.Info("drained: no turn runs")
			return
		}
	}
	w.log.Warn("drain timeout: cancelling the turns still running", "running", w.running())
}

// running counts the turns running in threads this worker holds (the
// store's marks are the cluster's, the leases this worker's).
func (w *worker) running() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := w.st.RunningTurns(ctx)
	if err != nil {
		w.log.Warn("cannot read the running turns", "err", err)
		return 1
	}
	owned := w.cluster.Owned()
	n := 0
	for _, r := range rs {
		if slices.Contains(owned, r.Thread.String()) {
			n++
		}
	}
	return n
}

// closeAll stops the proxies and closes the connection and the directory.
func (w *worker) closeAll() {
	w.metrics.stop()
	if w.remoteCancel != nil {
		w.remoteCancel()
		w.remoteWG.Wait()
	}
	if w.reg != nil {
		w.reg.Close()
	}
	if w.nc != nil {
		w.nc.Drain()
	}
	w.data.Close()
}
