package discord

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

// clusterRole writes the configuration of a role of the harness's cluster:
// its data directory, JSON logs, the cluster's NATS, ann allowed to prompt,
// the demo agent (the binary bin) keeping its sessions in agentState, and
// for an edge the fake Discord and its shard.
func clusterRole(t *testing.T, f *fakeDiscord, natsURL string, shard int, bin, agentState string) string {
	t.Helper()
	dir := t.TempDir()
	discord := ""
	if shard >= 0 {
		discord = fmt.Sprintf(`channels:
  discord:
    token: test-token
    apiBaseURL: %s
    shard: {id: %d, count: 2}
`, f.URL(), shard)
	}
	role := "worker"
	if shard >= 0 {
		role = "edge"
	}
	yaml := fmt.Sprintf(`dataDir: %s
log:
  format: json
  level: %s
metrics:
  listen: ""
%saccess:
  discord:
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
%s`, filepath.Join(dir, "data"), clustertest.LogLevel(), discord, ann.ID, bin, agentState, clustertest.RoleYAML(t, natsURL, role))
	file := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// Issue 17's proof on one machine: a 3-node JetStream cluster, 2 edges as
// Discord shards 0 and 1 of 2, 3 workers with the demo agent, the fake
// Discord counting rate limits in real time. Threads in guilds of both
// shards prompt concurrently while each edge and each worker is restarted
// in turn (SIGTERM, start again) and one worker is killed (SIGKILL) mid-turn.
// Every prompt gets exactly one answer, the agent's text; the killed turn's
// thread is told once that it was cut off and gets the whole answer without
// anyone sending again; no message is posted twice; no event is taken by
// two workers; no request meets a 429.
func TestClusterOfEdgesAndWorkers(t *testing.T) {
	began := time.Now()
	f := newFake(t)
	f.shard(2, 2) // each shard its own identify bucket: edges start together
	f.limitRates(time.Now)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the fake: %d requests, %d answered 429, violations %q", f.requestCount(), f.tooManyRequests(), f.Violations())
		}
	})
	n := clustertest.Threads(t)
	threads := make([]string, n+1) // the last: the killed worker's turn
	for i := range threads {
		_, threads[i] = f.addGuild(i % 2)
	}
	victim := threads[n]
	// What each thread got, to read a failure by.
	t.Cleanup(func() {
		if t.Failed() {
			for _, th := range threads {
				var said []string
				for _, m := range f.botMessages(th) {
					said = append(said, m.Content)
				}
				t.Logf("thread %s: the bot said %q", th, said)
			}
		}
	})

	nodes := clustertest.StartNATS(t)
	clustertest.DumpOnFailure(t, nodes[0].ClientURL(), "harness")
	t.Logf("threads %q, the last one's worker killed mid-turn", threads)
	bin := clustertest.Build(t)
	// One state directory for the demo agents of every worker: the
	// sessions' storage the workers share, so that a thread moved to
	// another worker resumes its session (session/load) there.
	agentState := t.TempDir()
	t.Logf("NATS and the build: %v", time.Since(began).Round(time.Millisecond))
	var edges, workers []*clustertest.Proc
	for i := range 2 {
		cfg := clusterRole(t, f, clustertest.URL(nodes, i), i, bin, agentState)
		edges = append(edges, clustertest.Start(t, bin, fmt.Sprintf("e%d", i), "edge", "--config", cfg, "--id", fmt.Sprintf("e%d", i)))
	}
	for i := range 3 {
		id := fmt.Sprintf("w%d", i+1)
		cfg := clusterRole(t, f, clustertest.URL(nodes, i+2), -1, bin, agentState)
		workers = append(workers, clustertest.Start(t, bin, id, "worker", "--config", cfg, "--id", id))
	}
	edgeReady := func(e *clustertest.Proc) {
		e.WaitRecord("serving Discord", func(r clustertest.Record) bool {
			return r.Msg() == "serving a channel to the workers" && r.Str("platform") == Platform
		})
	}
	workerReady := func(w *clustertest.Proc) {
		w.WaitRecord("Discord enabled", func(r clustertest.Record) bool {
			return r.Msg() == "channel enabled" && r.Str("platform") == Platform
		})
	}
	for _, e := range edges {
		edgeReady(e)
	}
	for _, w := range workers {
		workerReady(w)
	}
	ctx := t.Context()
	f.waitFor(clustertest.WaitCtx(t), "both shards live", func() bool {
		live := map[int]bool{}
		for c := range f.conns {
			if c.live {
				live[c.shard] = true
			}
		}
		return live[0] && live[1]
	})
	t.Logf("cluster up: %v", time.Since(began).Round(time.Millisecond))

	// Every thread prompts, one echo after the other, until the restarts
	// are over.
	var (
		over    atomic.Bool
		mu      sync.Mutex
		prompts = map[string][]string{} // thread → the texts it asked echoed
		wg      sync.WaitGroup
		errs    = make(chan error, n)
	)
	answered := func(th, text string) func() bool {
		return func() bool {
			for _, m := range f.botMessagesLocked(th) {
				if shown(m) == text {
					return true
				}
			}
			return false
		}
	}
	for i, th := range threads[:n] {
		wg.Go(func() {
			for round := 0; round == 0 || !over.Load(); round++ {
				text := fmt.Sprintf("answer %d of thread %d, whole", round, i)
				mu.Lock()
				prompts[th] = append(prompts[th], text)
				mu.Unlock()
				f.say(ann, th, "echo "+text, false)
				if err := f.waitErr(ctx, answered(th, text)); err != nil {
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
	f.say(ann, victim, fmt.Sprint("slow ", slow), false)
	f.waitFor(clustertest.WaitCtx(t), "the slow answer's first words", func() bool {
		for _, m := range f.botMessagesLocked(victim) {
			if strings.Contains(m.Content, "quick brown") {
				return true
			}
		}
		return false
	})
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
		mu.Unlock()
		f.say(ann, th, "echo "+text, false)
	}

	// Each edge, then each worker, stopped and started again in turn.
	for _, e := range edges {
		if code := e.Stop(syscall.SIGTERM); code != 0 {
			t.Errorf("%s exited with %d after SIGTERM", e.Name, code)
		}
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
			f.waitFor(clustertest.WaitCtx(t), "the answer "+text, answered(th, text))
		}
	}
	t.Logf("all answered at %v", time.Since(began).Round(time.Millisecond))
	total := 0
	notice := sysmsg.WorkerLost{Again: true}.Body()
	queued := clustertest.Waiting(len(threads) * len(prompts))
	for i, th := range threads {
		ms := f.botMessages(th)
		var said []string
		for _, m := range ms {
			said = append(said, shown(m))
		}
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
		if posts := f.requestsMatching("POST", "/channels/"+th+"/messages"); len(posts) != len(ms) {
			t.Errorf("thread %d (%s): %d posts for %d messages", i, th, len(posts), len(ms))
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
	if got := f.tooManyRequests(); got != 0 {
		t.Errorf("the fake answered %d requests with 429: %q", got, f.limitedRequests())
	}
	for _, v := range f.Violations() {
		t.Errorf("protocol violation: %s", v)
	}
	t.Logf("%d threads, %d prompts answered, %d requests, in %v", n, total, f.requestCount(), time.Since(began).Round(time.Millisecond))
}

// waitErr waits until ok (called with f.mu held) is true, or returns
// an error when WaitTimeout passes or ctx ends first; for goroutines of a
// test, which must not fail it themselves.
func (f *fakeDiscord) waitErr(ctx context.Context, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, clustertest.WaitTimeout)
	defer cancel()
	for {
		f.mu.Lock()
		done := ok()
		ch := f.changed
		f.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// requestCount is how many requests the fake has had.
func (f *fakeDiscord) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// shown is m's text as Discord shows it: without the whitespace around it
// (a streamed answer's last edit may end with a space; Discord trims it).
func shown(m fakeMessage) string { return strings.TrimSpace(m.Content) }
