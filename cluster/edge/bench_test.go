package edge_test

// Benchmarks of the cluster path (issue 17, point 9). They print numbers
// (b.ReportMetric) and assert nothing about time; `go test` without
// -bench does not run them. Commands and results: ARCHITECTURE.md,
// Cluster.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// firstPosts notes when a thread's first post (of any kind), and its
// first text post, happened after the thread was armed.
type firstPosts struct {
	mu    sync.Mutex
	marks map[channels.ThreadRef]*mark
}

// mark is one armed thread: anyAt is set and anyDone closed at its first
// post, textAt and textDone at its first post of kind text.
type mark struct {
	anyAt, textAt     time.Time
	anyDone, textDone chan struct{}
}

func newFirstPosts() *firstPosts {
	return &firstPosts{marks: map[channels.ThreadRef]*mark{}}
}

// arm starts waiting for th's next first posts.
func (f *firstPosts) arm(th channels.ThreadRef) *mark {
	m := &mark{anyDone: make(chan struct{}), textDone: make(chan struct{})}
	f.mu.Lock()
	f.marks[th] = m
	f.mu.Unlock()
	return m
}

// posted notes a post in th at now.
func (f *firstPosts) posted(th channels.ThreadRef, kind channels.Kind, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.marks[th]
	if !ok {
		return
	}
	if m.anyAt.IsZero() {
		m.anyAt = now
		close(m.anyDone)
	}
	if kind == channels.KindText && m.textAt.IsZero() {
		m.textAt = now
		close(m.textDone)
	}
}

// stamped is the recorder's adapter (with Edit and Typing) noting each
// post's time; it has exactly the recorder's capabilities.
type stamped struct {
	channels.Adapter
	f *firstPosts
}

func (a stamped) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	h, err := a.Adapter.Post(ctx, t, m)
	if err == nil {
		a.f.posted(t, m.Kind, time.Now())
	}
	return h, err
}

func (a stamped) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return a.Adapter.(channels.Editor).Edit(ctx, h, m)
}

func (a stamped) Typing(ctx context.Context, t channels.ThreadRef) error {
	return a.Adapter.(channels.Typer).Typing(ctx, t)
}

func (a stamped) StopTyping(ctx context.Context, t channels.ThreadRef) error {
	return a.Adapter.(channels.TypingStopper).StopTyping(ctx, t)
}

// platform is a recorder and its stamped adapter.
func platform() (*channeltest.Recorder, *firstPosts, channels.Adapter) {
	rec := channeltest.New(channeltest.Options{Edit: true, Typing: true})
	f := newFirstPosts()
	return rec, f, stamped{Adapter: rec.Adapter(), f: f}
}

// benchSession is a session router with the demo agent serving ad, as in
// `gateway run` (or inside a worker); it stops with the benchmark.
// Goroutines the caller adds to the returned group get ctx and are waited
// for before the store closes.
// Turn ends go to ends (nil: a new record).
func benchSession(b *testing.B, ad channels.Adapter, maxProcs int, ends *sessiontest.TurnEnds) (*session.Router, *sessiontest.TurnEnds, context.Context, *sync.WaitGroup) {
	b.Helper()
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	if ends == nil {
		ends = sessiontest.NewTurnEnds()
	}
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	r := session.New(session.Options{
		Store:     st,
		Agent:     func(string) (agent.Spec, bool) { return spec, true },
		Cwd:       dir,
		Open:      []string{"test"},
		Logger:    testlog.FailOnSDKError(b),
		OnTurnEnd: ends.Record,
		Limits:    session.Limits{MaxProcesses: maxProcs},
	})
	r.Add("test", ad)
	wg := &sync.WaitGroup{}
	wg.Go(func() { _ = r.Run(ctx) })
	b.Cleanup(func() {
		cancel()
		wg.Wait()
		st.Close()
	})
	return r, ends, ctx, wg
}

// benchNode is an embedded JetStream node on loopback.
func benchNode(b *testing.B) string {
	b.Helper()
	n, err := natsnode.Start(natsnode.Options{StoreDir: b.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(n.Shutdown)
	return n.ClientURL()
}

// benchConnect is one process's connection (its own TCP connection).
func benchConnect(b *testing.B, url, name string) (*nats.Conn, jetstream.JetStream, *cluster.Inbound) {
	b.Helper()
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, name)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in, err := cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: clusterName, DuplicateWindow: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return nc, js, in
}

// benchEdge runs an edge for ad, with its options changed by set, until
// the benchmark ends.
func benchEdge(b *testing.B, url string, ad channels.Adapter, set ...func(*edge.Options)) *edge.Edge {
	b.Helper()
	nc, js, in := benchConnect(b, url, "edge")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := edge.Options{
		Cluster: clusterName, ID: "e1", Platform: "test", Adapter: ad,
		Conn: nc, JS: js, Inbound: in, Log: testlog.FailOnError(b),
	}
	for _, f := range set {
		f(&o)
	}
	e, err := edge.New(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(rctx) }()
	b.Cleanup(func() {
		rcancel()
		if err := <-done; err != nil {
			b.Errorf("edge: %v", err)
		}
	})
	select {
	case <-e.Ready():
	case err := <-done:
		done <- err
		b.Fatalf("edge: %v", err)
	}
	return e
}

// handOvers notes when the cluster handed each thread's event to a
// worker's session (by cluster.Event.Thread, the last one).
// took is how long each hand-over took (the worker's handler, which the
// next event of the cluster waits for).
type handOvers struct {
	mu   sync.Mutex
	at   map[string]time.Time
	took []time.Duration
}

func (h *handOvers) note(thread string, start time.Time) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at[thread] = start
	h.took = append(h.took, time.Since(start))
}

func (h *handOvers) of(thread string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.at[thread]
}

// benchWorker is a worker: its own connection, the remote adapter, the
// real session with the demo agent (at most maxProcs agents), behind a
// cluster.Router with its own lease owner id. Hand-overs to the session
// go to handed (may be nil).
func benchWorker(b *testing.B, url, id string, maxProcs int, reg bool, ends *sessiontest.TurnEnds, handed *handOvers) (*sessiontest.TurnEnds, *cluster.Router) {
	b.Helper()
	nc, js, in := benchConnect(b, url, id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ra, err := remote.Open(ctx, remote.Options{
		Cluster: clusterName, Platform: "test", Conn: nc, JS: js, Log: testlog.FailOnError(b),
	})
	if err != nil {
		b.Fatal(err)
	}
	r, ends, rctx, wg := benchSession(b, ra, maxProcs, ends)
	leases, err := cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: clusterName, Owner: id, TTL: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	var registry *cluster.Registry
	if reg {
		registry, err = cluster.OpenRegistry(ctx, js, cluster.RegistryOptions{Cluster: clusterName, TTL: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(registry.Close)
	}
	handle := remote.Handler(ra)
	cr := cluster.NewRouter(cluster.RouterOptions{
		Cluster: clusterName, Conn: nc, Leases: leases, Inbound: in, Registry: registry,
		Agents: []string{"demo"}, Retry: 20 * time.Millisecond, Log: testlog.FailOnError(b),
		Handle: func(ctx context.Context, ev cluster.Event) error {
			start := time.Now()
			defer handed.note(ev.Thread, start)
			return handle(ctx, ev)
		},
	})
	wg.Go(func() { _ = ra.Run(rctx, r.Handle) })
	wg.Go(func() {
		if err := cr.Run(rctx); err != nil {
			b.Errorf("cluster router %s: %v", id, err)
		}
	})
	return ends, cr
}

// prompt delivers an echo prompt in th and returns when it was handed in.
func prompt(b *testing.B, rec *channeltest.Recorder, th channels.ThreadRef, id, text string) time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if err := rec.Deliver(ctx, channels.Inbound{Thread: th, Author: ann, Text: "echo " + text, ID: channels.MessageID(id)}); err != nil {
		b.Error(err)
	}
	return start
}

// wait waits for c, or fails after a minute naming what.
func wait(b *testing.B, c <-chan struct{}, what string) bool {
	select {
	case <-c:
		return true
	case <-time.After(time.Minute):
		b.Errorf("no %s within a minute", what)
		return false
	}
}

// percentiles reports p50 and p99 of lat in milliseconds, as name-p50-ms
// and name-p99-ms, and returns them.
func percentiles(b *testing.B, lat []time.Duration, name string) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p50, p99 = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	b.ReportMetric(p50, name+"p50-ms")
	b.ReportMetric(p99, name+"p99-ms")
	return p50, p99
}

// hopThreads is how many warm threads each setup of the hop benchmark
// prompts in turn.
const hopThreads = 4

// BenchmarkEventToFirstPost is the time from an inbound event (handed to
// the platform adapter's handler) to the turn's first post in the thread
// (the agent's text), for an agent that answers at once (the demo agent's
// echo) in a thread whose agent already runs, in two setups side by side:
// "local" is the session with the adapter in the same process (`gateway
// run`); "cluster" is edge → JetStream → the worker's Router → session →
// remote adapter → NATS request → edge, on an embedded node on loopback.
// Each iteration prompts once in each setup, one prompt at a time, so a
// busy machine slows both alike; added- is the cluster's percentile less
// the local one, what the NATS hops add.
func BenchmarkEventToFirstPost(b *testing.B) {
	var local, clus hopSetup
	local.rec, local.f, local.ad = platform()
	r, ends, ctx, wg := benchSession(b, local.ad, 8, nil)
	local.ends = ends
	wg.Go(func() { _ = local.ad.Run(ctx, r.Handle) })

	url := benchNode(b)
	clus.rec, clus.f, clus.ad = platform()
	benchEdge(b, url, clus.ad)
	clus.ends, _ = benchWorker(b, url, "w1", 8, false, nil, nil)

	local.warm(b)
	clus.warm(b)
	i := 0
	for b.Loop() {
		local.once(b, i)
		clus.once(b, i)
		i++
	}
	b.StopTimer()
	lp50, lp99 := percentiles(b, local.lat, "local-")
	cp50, cp99 := percentiles(b, clus.lat, "cluster-")
	b.ReportMetric(cp50-lp50, "added-p50-ms")
	b.ReportMetric(cp99-lp99, "added-p99-ms")
	for _, s := range []*hopSetup{&local, &clus} {
		if got := text(s.rec, s.threads[0]); !strings.Contains(got, "answer 0") {
			b.Fatalf("thread %s did not get its answer: %q", s.threads[0], got)
		}
	}
}

// hopSetup is one setup of the hop benchmark: its platform, its warm
// threads and the latencies measured.
type hopSetup struct {
	rec     *channeltest.Recorder
	f       *firstPosts
	ad      channels.Adapter
	ends    *sessiontest.TurnEnds
	threads []channels.ThreadRef
	lat     []time.Duration
}

// warm starts the agents of hopThreads threads.
func (s *hopSetup) warm(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range hopThreads {
		th := s.rec.Thread(fmt.Sprint("t", i))
		s.threads = append(s.threads, th)
		prompt(b, s.rec, th, fmt.Sprint("warm", i), "warm")
		if _, ok := s.ends.Next(ctx, th); !ok {
			b.Fatalf("no turn end in %s", th)
		}
	}
}

// once prompts in the next thread and notes the latency of the first
// post; it returns when the turn ended.
func (s *hopSetup) once(b *testing.B, i int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	th := s.threads[i%len(s.threads)]
	m := s.f.arm(th)
	start := prompt(b, s.rec, th, fmt.Sprint("m", i), fmt.Sprint("answer ", i))
	if !wait(b, m.anyDone, "post in "+th.String()) {
		b.FailNow()
	}
	s.lat = append(s.lat, m.anyAt.Sub(start))
	if _, ok := s.ends.Next(ctx, th); !ok {
		b.Fatalf("no turn end in %s", th)
	}
}

// envInt is the environment variable name as a positive number, else def.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// heapInUse is the process's heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// childRSS is the number of this process's child processes (the agents)
// and their resident memory, from /proc.
func childRSS() (n int, kb int64) {
	me := strconv.Itoa(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		st, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: the command may hold spaces.
		rest := string(st[strings.LastIndexByte(string(st), ')')+1:])
		if f := strings.Fields(rest); len(f) < 2 || f[1] != me {
			continue
		}
		status, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				n, kb = n+1, kb+k
			}
		}
	}
	return n, kb
}

// BenchmarkThreads is BENCH_THREADS (default 1,000) threads prompting at
// once (one echo prompt each, all delivered together) through one edge
// and three workers, in this one process, each worker running the real
// session with at most BENCH_MAX_PROCESSES (default 16) demo agents: a
// thread beyond them waits in line (and is told its place) until an idle
// agent gives way. Latency percentiles, from the event handed to the
// edge's handler: taken- to the handler's return (the recorder hands
// events to the edge one at a time, as one platform connection's reader
// does, so a burst queues there; the edge takes an event without waiting
// for it to be stored, up to its window), stored- to the event stored in
// the inbound stream (its ack back at the edge), handed- to the
// owning worker's handler (handler- is how
// long that handler took), post- to the thread's first post (the answer,
// or the notice of its place in line), answer- to its first text post.
// Memory: heap-MB/worker is the heap the three workers added, over three
// (the node and the edge share the heap; what the node keeps of the
// burst is in it); heap-KB/thread is the heap the burst added per thread;
// RSS-MB/agent is the mean resident memory of the agents still running.
// Each iteration takes new threads; run it with -benchtime 1x.
func BenchmarkThreads(b *testing.B) {
	n := envInt(b, "BENCH_THREADS", 1000)
	procs := envInt(b, "BENCH_MAX_PROCESSES", 16)
	const workers = 3
	url := benchNode(b)
	rec, f, ad := platform()
	e := benchEdge(b, url, ad)
	var storedMu sync.Mutex
	storedAt := map[string]time.Time{} // by thread, the last event
	e.OnStored(func(ev cluster.Event) {
		storedMu.Lock()
		storedAt[ev.Thread] = time.Now()
		storedMu.Unlock()
	})
	base := heapInUse()
	ends := sessiontest.NewTurnEnds() // the workers' together
	handed := &handOvers{at: map[string]time.Time{}}
	routers := make([]*cluster.Router, workers)
	for i := range routers {
		_, routers[i] = benchWorker(b, url, fmt.Sprint("w", i+1), procs, true, ends, handed)
	}
	idle := heapInUse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var taken, stored, hand, first, answer []time.Duration
	var took time.Duration
	round := 0
	for b.Loop() {
		threads := make([]channels.ThreadRef, n)
		marks := make([]*mark, n)
		starts, in := make([]time.Time, n), make([]time.Time, n)
		for i := range threads {
			threads[i] = rec.Thread(fmt.Sprintf("r%d-t%d", round, i))
			marks[i] = f.arm(threads[i])
		}
		begin := time.Now()
		var wg sync.WaitGroup
		for i, th := range threads {
			wg.Go(func() {
				starts[i] = prompt(b, rec, th, fmt.Sprintf("r%d-m%d", round, i), fmt.Sprint("answer ", i))
				in[i] = time.Now()
			})
		}
		wg.Wait()
		for i := range threads {
			taken = append(taken, in[i].Sub(starts[i]))
		}
		for i, m := range marks {
			if !wait(b, m.textDone, "answer in "+threads[i].String()) {
				return
			}
			storedMu.Lock()
			stored = append(stored, storedAt[threads[i].String()].Sub(starts[i]))
			storedMu.Unlock()
			hand = append(hand, handed.of(threads[i].String()).Sub(starts[i]))
			first = append(first, m.anyAt.Sub(starts[i]))
			answer = append(answer, m.textAt.Sub(starts[i]))
		}
		took += time.Since(begin)
		for _, th := range threads {
			if _, ok := ends.Next(ctx, th); !ok {
				b.Fatalf("no turn end in %s", th)
			}
		}
		round++
	}
	b.StopTimer()
	used := heapInUse()
	agents, kb := childRSS()
	percentiles(b, taken, "taken-")
	percentiles(b, stored, "stored-")
	percentiles(b, hand, "handed-")
	percentiles(b, handed.took, "handler-")
	percentiles(b, first, "post-")
	percentiles(b, answer, "answer-")
	b.ReportMetric(float64(n*round)/took.Seconds(), "answers/s")
	b.ReportMetric(float64(used-base)/workers/(1<<20), "heap-MB/worker")
	b.ReportMetric(float64(used-idle)/float64(n*round)/(1<<10), "heap-KB/thread")
	held := []int{}
	for _, cr := range routers {
		held = append(held, len(cr.Owned()))
	}
	b.ReportMetric(float64(slices.Min(held)), "threads-min/worker")
	b.ReportMetric(float64(slices.Max(held)), "threads-max/worker")
	if agents > 0 {
		b.ReportMetric(float64(agents), "agents")
		b.ReportMetric(float64(kb)/float64(agents)/(1<<10), "RSS-MB/agent")
	}
	got := map[channels.ThreadRef]string{}
	for _, m := range rec.Messages() {
		if m.Kind == channels.KindText {
			got[m.Thread] += m.Text
		}
	}
	for r := range round {
		for i := range n {
			th := rec.Thread(fmt.Sprintf("r%d-t%d", r, i))
			if want := fmt.Sprint("answer ", i); got[th] != want {
				b.Errorf("%s got %q, want %q", th, got[th], want)
			}
		}
	}
}
