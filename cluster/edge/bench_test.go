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

// benchEdge runs an edge for ad until the benchmark ends.
func benchEdge(b *testing.B, url string, ad channels.Adapter) {
	b.Helper()
	nc, js, in := benchConnect(b, url, "edge")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := edge.New(ctx, edge.Options{
		Cluster: clusterName, ID: "e1", Platform: "test", Adapter: ad,
		Conn: nc, JS: js, Inbound: in, Log: testlog.FailOnError(b),
	})
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
}

// benchWorker is a worker: its own connection, the remote adapter, the
// real session with the demo agent (at most maxProcs agents), behind a
// cluster.Router with its own lease owner id.
func benchWorker(b *testing.B, url, id string, maxProcs int, reg bool, ends *sessiontest.TurnEnds) *sessiontest.TurnEnds {
	b.Helper()
	nc, js, in := benchConnect(b, url, id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ra, view, err := remote.Open(ctx, remote.Options{
		Cluster: clusterName, Platform: "test", Conn: nc, JS: js, Log: testlog.FailOnError(b),
	})
	if err != nil {
		b.Fatal(err)
	}
	r, ends, rctx, wg := benchSession(b, view, maxProcs, ends)
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
	cr := cluster.NewRouter(cluster.RouterOptions{
		Cluster: clusterName, Conn: nc, Leases: leases, Inbound: in, Registry: registry,
		Agents: []string{"demo"}, Retry: 20 * time.Millisecond, Log: testlog.FailOnError(b),
		Handle: remote.Handler(ra),
	})
	wg.Go(func() { _ = view.Run(rctx, r.Handle) })
	wg.Go(func() {
		if err := cr.Run(rctx); err != nil {
			b.Errorf("cluster router %s: %v", id, err)
		}
	})
	return ends
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
// and name-p99-ms.
func percentiles(b *testing.B, lat []time.Duration, name string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), name+"p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), name+"p99-ms")
}

// hopThreads is how many warm threads the hop benchmark prompts in turn.
const hopThreads = 4

// BenchmarkEventToFirstPost is the time from an inbound event (handed to
// the platform adapter's handler) to the turn's first post in the thread,
// for an agent that answers at once (the demo agent's echo) in a thread
// whose agent already runs: "local" is the session with the adapter in
// the same process (`gateway run`); "cluster" is edge → JetStream →
// worker's Router → session → remote adapter → edge, on an embedded node
// on loopback. One prompt at a time; the difference of the two is what
// the NATS hops add.
func BenchmarkEventToFirstPost(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		rec, f, ad := platform()
		r, ends, ctx, wg := benchSession(b, ad, 8, nil)
		wg.Go(func() { _ = ad.Run(ctx, r.Handle) })
		hop(b, rec, f, ends)
	})
	b.Run("cluster", func(b *testing.B) {
		url := benchNode(b)
		rec, f, ad := platform()
		benchEdge(b, url, ad)
		ends := benchWorker(b, url, "w1", 8, false, nil)
		hop(b, rec, f, ends)
	})
}

// hop warms hopThreads threads (their agents start), then prompts them
// in turn, one at a time, and reports the latencies.
func hop(b *testing.B, rec *channeltest.Recorder, f *firstPosts, ends *sessiontest.TurnEnds) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	threads := make([]channels.ThreadRef, hopThreads)
	for i := range threads {
		threads[i] = rec.Thread(fmt.Sprint("t", i))
		prompt(b, rec, threads[i], fmt.Sprint("warm", i), "warm")
		if _, ok := ends.Next(ctx, threads[i]); !ok {
			b.Fatalf("no turn end in %s", threads[i])
		}
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		th := threads[i%len(threads)]
		m := f.arm(th)
		start := prompt(b, rec, th, fmt.Sprint("m", i), fmt.Sprint("answer ", i))
		if !wait(b, m.anyDone, "post in "+th.String()) {
			return
		}
		lat = append(lat, m.anyAt.Sub(start))
		if _, ok := ends.Next(ctx, th); !ok {
			b.Fatalf("no turn end in %s", th)
		}
		i++
	}
	b.StopTimer()
	percentiles(b, lat, "")
	if !strings.Contains(text(rec, threads[0]), "answer 0") {
		b.Fatalf("thread %s did not get its answer: %q", threads[0], text(rec, threads[0]))
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
// agent gives way. It reports event-to-first-post (the answer or the
// notice of the place in line) and event-to-answer (the first text post)
// percentiles, the heap the workers added (the node and the edge are in
// the same heap; per worker is a third of it, per thread the total over
// the threads) and the agents' resident memory. Each iteration takes new
// threads; run it with -benchtime 1x.
func BenchmarkThreads(b *testing.B) {
	n := envInt(b, "BENCH_THREADS", 1000)
	procs := envInt(b, "BENCH_MAX_PROCESSES", 16)
	const workers = 3
	url := benchNode(b)
	rec, f, ad := platform()
	benchEdge(b, url, ad)
	base := heapInUse()
	ends := sessiontest.NewTurnEnds() // the workers' together
	for i := range workers {
		benchWorker(b, url, fmt.Sprint("w", i+1), procs, true, ends)
	}
	idle := heapInUse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var first, answer []time.Duration
	var took time.Duration
	round := 0
	for b.Loop() {
		threads := make([]channels.ThreadRef, n)
		marks := make([]*mark, n)
		starts := make([]time.Time, n)
		for i := range threads {
			threads[i] = rec.Thread(fmt.Sprintf("r%d-t%d", round, i))
			marks[i] = f.arm(threads[i])
		}
		begin := time.Now()
		var wg sync.WaitGroup
		for i, th := range threads {
			wg.Go(func() { starts[i] = prompt(b, rec, th, fmt.Sprintf("r%d-m%d", round, i), fmt.Sprint("answer ", i)) })
		}
		wg.Wait()
		for i, m := range marks {
			if !wait(b, m.textDone, "answer in "+threads[i].String()) {
				return
			}
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
	percentiles(b, first, "post-")
	percentiles(b, answer, "answer-")
	b.ReportMetric(float64(n*round)/took.Seconds(), "answers/s")
	b.ReportMetric(float64(used-base)/workers/(1<<20), "heap-MB/worker")
	b.ReportMetric(float64(used-idle)/float64(n*round)/(1<<10), "heap-KB/thread")
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
