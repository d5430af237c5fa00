package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/sysmsg"
)

// ClusterDriver is one platform's part of the cluster case: its fake,
// which the gateway programs of the case reach over the network, and
// Ann's hands and eyes there. The methods fail t rather than return
// errors, but Say, Said and Changed, which the case's goroutines call.
type ClusterDriver interface {
	// Platform is the platform's name, as the configuration names it.
	Platform() string
	// Places makes the fake ready for n threads (their places: channels,
	// guilds), before any edge starts.
	Places(t *testing.T, n int)
	// Channel is the "channels:" section of the configuration of edge i
	// of 2: the adapter against the fake.
	Channel(i int) string
	// UserID is p's user id on the fake.
	UserID(p Person) string
	// Live waits until both edges are connected to the fake.
	Live(t *testing.T, ctx context.Context)
	// Say has Ann write text in thread i of the n+1 (0 ≤ i ≤ n) and
	// returns the thread's id (the last part of its reference); the
	// first message opens the thread where the platform opens it then.
	// It may be called from several goroutines.
	Say(ctx context.Context, i int, text string) (thread string, err error)
	// Said returns the texts of the app's messages in the thread of id
	// th, oldest first, as a person sees them.
	Said(th string) []string
	// Changed returns a channel closed at the fake's next change.
	Changed() <-chan struct{}
	// Posts is how many messages the app posted in th (not edits).
	Posts(th string) int
	// EdgeStopped is told that an edge stopped, for a platform that then
	// delivers again what the edge did not acknowledge.
	EdgeStopped(t *testing.T, ctx context.Context)
	// Check checks, at the end, what the fake saw: no request met a rate
	// limit, and the platform's protocol was kept.
	Check(t *testing.T)
	// Requests is how many requests the fake has had, for the log.
	Requests() int
}

// clusterRole writes the configuration of a role of the cluster: its
// data directory, JSON logs, the cluster's NATS, Ann allowed to prompt,
// the demo agent (the binary bin) keeping its sessions in agentState,
// and for an edge (edge ≥ 0) its adapter against the fake.
func clusterRole(t *testing.T, d ClusterDriver, natsURL string, edge int, bin, agentState string) string {
	t.Helper()
	dir := t.TempDir()
	role, channel := "worker", ""
	if edge >= 0 {
		role, channel = "edge", d.Channel(edge)
	}
	yaml := fmt.Sprintf(`dataDir: %s
log:
  format: json
  level: %s
metrics:
  listen: ""
%saccess:
  %s:
    users: [%q]
agents:
  list:
    demo:
      command: [%q, demo-agent, --state-dir, %q]
cluster:
  name: harness
  # Long enough that a worker starved of CPU (-race, nine sandboxed agents
  # starting on two cores) keeps its leases: a lease lost while a cut-off
  # prompt is being asked again makes the next owner tell it, not ask it.
  leaseTTL: 6s
  drainTimeout: 30s
%s`, filepath.Join(dir, "data"), clustertest.LogLevel(), channel, d.Platform(), d.UserID(Ann), bin, agentState, clustertest.RoleYAML(t, natsURL, role))
	file := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// waitErr waits until ok is true, checked at each change of d's fake, or
// returns an error when clustertest.WaitTimeout passes or ctx ends first.
func waitErr(ctx context.Context, d ClusterDriver, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, clustertest.WaitTimeout)
	defer cancel()
	return Wait(ctx, d, ok)
}

// RunCluster is issue 17's proof on one machine: a 3-node JetStream
// cluster, 2 edges against d's fake, 3 workers with the demo agent.
// Threads prompt concurrently while each edge and each worker is
// restarted in turn (SIGTERM, start again) and one worker is killed
// (SIGKILL) mid-turn. Every prompt gets exactly one answer, the agent's
// text; the killed turn's thread is told once that it was cut off and
// gets the whole answer without anyone sending again; no message is
// posted twice; no event is taken by two workers; no request meets a
// rate limit (Check).
func RunCluster(t *testing.T, d ClusterDriver) {
	clustertest.TakeTurn(t)
	began := time.Now()
	n := clustertest.Threads(t)
	d.Places(t, n+1) // the last: the killed worker's turn
	var (
		mu      sync.Mutex
		threads = make([]string, n+1)   // i → thread i's id, once known
		index   = map[string]int{}      // a thread's id → its i
		prompts = map[string][]string{} // thread → the texts it asked echoed
	)
	say := func(ctx context.Context, i int, text string) (string, error) {
		th, err := d.Say(ctx, i, text)
		if err != nil {
			return "", fmt.Errorf("thread %d: %w", i, err)
		}
		mu.Lock()
		defer mu.Unlock()
		threads[i], index[th] = th, i
		return th, nil
	}
	// What each thread got, to read a failure by.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the fake: %d requests", d.Requests())
			mu.Lock()
			ths := append([]string(nil), threads...)
			mu.Unlock()
			for _, th := range ths {
				if th != "" {
					t.Logf("thread %s: the app said %q", th, d.Said(th))
				}
			}
		}
	})

	nodes := clustertest.StartNATS(t)
	clustertest.DumpOnFailure(t, nodes[0].ClientURL(), "harness")
	bin := clustertest.Build(t)
	// One state directory for the demo agents of every worker: the
	// sessions' storage the workers share, so that a thread moved to
	// another worker resumes its session (session/load) there.
	agentState := t.TempDir()
	t.Logf("NATS and the build: %v", time.Since(began).Round(time.Millisecond))
	var edges, workers []*clustertest.Proc
	for i := range 2 {
		cfg := clusterRole(t, d, clustertest.URL(nodes, i), i, bin, agentState)
		edges = append(edges, clustertest.Start(t, bin, fmt.Sprintf("e%d", i), "edge", "--config", cfg, "--id", fmt.Sprintf("e%d", i)))
	}
	for i := range 3 {
		id := fmt.Sprintf("w%d", i+1)
		cfg := clusterRole(t, d, clustertest.URL(nodes, i+2), -1, bin, agentState)
		workers = append(workers, clustertest.Start(t, bin, id, "worker", "--config", cfg, "--id", id))
	}
	edgeReady := func(e *clustertest.Proc) {
		e.WaitRecord("serving "+d.Platform(), func(r clustertest.Record) bool {
			return r.Msg() == "serving a channel to the workers" && r.Str("platform") == d.Platform()
		})
	}
	workerReady := func(w *clustertest.Proc) {
		w.WaitRecord(d.Platform()+" enabled", func(r clustertest.Record) bool {
			return r.Msg() == "channel enabled" && r.Str("platform") == d.Platform()
		})
	}
	for _, e := range edges {
		edgeReady(e)
	}
	for _, w := range workers {
		workerReady(w)
	}
	ctx := t.Context()
	d.Live(t, clustertest.WaitCtx(t))
	t.Logf("cluster up: %v", time.Since(began).Round(time.Millisecond))

	answered := func(th, text string) func() bool {
		return func() bool {
			for _, s := range d.Said(th) {
				if s == text {
					return true
				}
			}
			return false
		}
	}
	waitAnswer := func(th, text string) {
		t.Helper()
		if err := waitErr(ctx, d, answered(th, text)); err != nil {
			t.Fatalf("waiting for the answer %s in %s: %v", text, th, err)
		}
	}
	// Every thread prompts, one echo after the other, until the restarts
	// are over.
	var (
		over atomic.Bool
		wg   sync.WaitGroup
		errs = make(chan error, n)
	)
	for i := range n {
		wg.Go(func() {
			for round := 0; round == 0 || !over.Load(); round++ {
				text := fmt.Sprintf("answer %d of thread %d, whole", round, i)
				th, err := say(ctx, i, "echo "+text)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				prompts[th] = append(prompts[th], text)
				mu.Unlock()
				if err := waitErr(ctx, d, answered(th, text)); err != nil {
					errs <- fmt.Errorf("thread %d's answer %d: %w", i, round, err)
					return
				}
			}
		})
	}

	// The killed worker's turn: a slow answer, its worker killed once its
	// first words are out, and the worker started again.
	const slow = 120
	whole := strings.TrimSpace(demoagent.SlowAnswer(slow))
	victim, err := say(ctx, n, fmt.Sprint("slow ", slow))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("thread %s: the slow answer, its worker to be killed mid-turn", victim)
	if err := waitErr(ctx, d, func() bool {
		for _, s := range d.Said(victim) {
			if strings.Contains(s, "quick brown") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("waiting for the slow answer's first words: %v", err)
	}
	var killed *clustertest.Proc
	for _, w := range workers {
		for _, r := range w.Records("taking an event") {
			if strings.HasSuffix(r.Str("thread"), "/"+victim) {
				killed = w
			}
		}
	}
	if killed == nil {
		t.Fatal("no worker took the slow prompt")
	}
	killedRun := fmt.Sprintf("%s run %d", killed.Name, killed.Run())
	killed.Stop(syscall.SIGKILL)
	t.Logf("%s killed mid-turn at %v", killed.Name, time.Since(began).Round(time.Millisecond))
	killed.Restart()
	workerReady(killed)
	// The next message in each of its threads is claimed elsewhere, and the
	// turn it cut off there asked again (issue 17 point 3): each of those
	// threads gets one more message, the person not sending again.
	mu.Lock()
	prompts[victim] = []string{whole}
	mu.Unlock()
	nudged := map[string]bool{}
	for _, r := range killed.Records("taking an event") {
		th := r.Str("thread")
		th = th[strings.LastIndex(th, "/")+1:]
		if fmt.Sprintf("%s run %d", killed.Name, r.Run) != killedRun || nudged[th] {
			continue
		}
		nudged[th] = true
		text := "the next message in " + th + ", after the kill"
		mu.Lock()
		prompts[th] = append(prompts[th], text)
		i, ok := index[th]
		mu.Unlock()
		if !ok {
			t.Fatalf("the killed worker took an event of thread %s, not one of the test's", th)
		}
		if _, err := say(ctx, i, "echo "+text); err != nil {
			t.Fatal(err)
		}
	}

	// Each edge, then each worker, stopped and started again in turn.
	for _, e := range edges {
		if code := e.Stop(syscall.SIGTERM); code != 0 {
			t.Errorf("%s exited with %d after SIGTERM", e.Name, code)
		}
		d.EdgeStopped(t, ctx)
		e.Restart()
		edgeReady(e)
		t.Logf("%s restarted at %v", e.Name, time.Since(began).Round(time.Millisecond))
	}
	for _, w := range workers {
		if code := w.Stop(syscall.SIGTERM); code != 0 {
			t.Errorf("%s exited with %d after SIGTERM", w.Name, code)
		}
		w.Restart()
		workerReady(w)
		t.Logf("%s restarted at %v", w.Name, time.Since(began).Round(time.Millisecond))
	}
	over.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err) // every thread's, not the first only
	}
	if t.Failed() {
		t.FailNow()
	}

	// Every prompt answered once with the agent's text, and nothing else
	// said but queue notices; in a thread whose turn the kill cut off, one
	// notice, after which the cut-off prompt is answered once more (whole),
	// its answer before the notice (whole or cut short) staying.
	for _, th := range threads {
		for _, text := range prompts[th] {
			waitAnswer(th, text)
		}
	}
	t.Logf("all answered at %v", time.Since(began).Round(time.Millisecond))
	total := 0
	notice := sysmsg.WorkerLost{Again: true}.Body()
	queued := clustertest.Waiting(len(threads) * len(prompts))
	for i, th := range threads {
		said := d.Said(th)
		total += len(prompts[th])
		cut, problems := clustertest.CheckAnswers(prompts[th], said, notice, queued)
		for _, p := range problems {
			t.Errorf("thread %d (%s): %s: %q", i, th, p, said)
		}
		if th == victim && cut < 0 {
			t.Errorf("the killed worker's thread was not told its turn was cut off: %q", said)
		}
		if cut >= 0 && !nudged[th] {
			t.Errorf("thread %d (%s), never on the killed worker, told its turn was cut off", i, th)
		}
		if posts := d.Posts(th); posts != len(said) {
			t.Errorf("thread %d (%s): %d posts for %d messages", i, th, posts, len(said))
		}
	}

	// No event taken by two workers, but those the stream gave again
	// because the worker that took or forwarded them died before it
	// acknowledged them: the killed run's, and those the next owner
	// dropped as taken already (the answers, checked above, are once).
	dropped := map[string]bool{} // "<worker> run <n> <message id>"
	for _, w := range workers {
		for _, r := range w.Records("dropping a message the thread took already (delivered twice)") {
			dropped[fmt.Sprintf("%s run %d %s", w.Name, r.Run, r.Str("id"))] = true
		}
	}
	takenBy := map[string]string{}
	for _, w := range workers {
		for _, r := range w.Records("taking an event") {
			ev := r.Str("event")
			by := fmt.Sprintf("%s run %d", w.Name, r.Run)
			prev, ok := takenBy[ev]
			id := ev[strings.LastIndex(ev, "/")+1:]
			again := prev == killedRun || by == killedRun || dropped[prev+" "+id] || dropped[by+" "+id]
			if ok && prev != by && !again {
				t.Errorf("event %s (thread %s) taken by %s and by %s", ev, r.Str("thread"), prev, by)
			}
			takenBy[ev] = by
		}
	}
	d.Check(t)
	t.Logf("%d threads, %d prompts answered, %d requests, in %v", n, total, d.Requests(), time.Since(began).Round(time.Millisecond))
}
