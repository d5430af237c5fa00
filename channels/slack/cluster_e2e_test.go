package slack

import (
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
// for an edge the fake Slack app.
func clusterRole(t *testing.T, f *fakeSlack, natsURL string, edge bool, bin, agentState string) string {
	t.Helper()
	dir := t.TempDir()
	slack := ""
	if edge {
		slack = fmt.Sprintf(`channels:
  slack:
    appToken: %s
    botToken: %s
    apiURL: %s/api/
    streaming: edits
`, f.appToken, f.botToken, f.srv.URL)
	}
	role := "worker"
	if edge {
		role = "edge"
	}
	yaml := fmt.Sprintf(`dataDir: %s
log:
  format: json
  level: %s
metrics:
  listen: ""
%saccess:
  slack:
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
%s`, filepath.Join(dir, "data"), clustertest.LogLevel(), slack, ann, bin, agentState, clustertest.RoleYAML(t, natsURL, role))
	file := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// Issue 17's proof on one machine, on Slack: a 3-node JetStream cluster, 2
// edges sharing the app's Socket Mode connections (the fake sends each
// event to one at random and, after an edge stopped, sends again what was
// not acknowledged), 3 workers with the demo agent. Threads prompt
// concurrently (each message mentions the app: an edge keeps no store, so
// it knows a thread once it saw it mentioned) while each edge and each
// worker is restarted in turn and one worker is killed (SIGKILL) mid-turn.
// Every prompt gets exactly one answer, the agent's text; the killed turn's
// thread is told once that it was cut off and gets the whole answer without
// anyone sending again; no message is posted twice; no event is taken by
// two workers; no post meets Slack's channel limit (a 429).
func TestClusterOfEdgesAndWorkers(t *testing.T) {
	began := time.Now()
	f := newFake(t, fakeOptions{sockets: true, channelLimit: true})
	f.addUser(ann, "Ann")
	n := clustertest.Threads(t)
	// The threads share channels two by two, as a team's do: Slack's
	// post limit is a channel's, which its threads share.
	channels := (n + 1) / 2
	for i := range channels {
		f.addChannel(fmt.Sprintf("C0CHAN%d", i))
	}

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
		cfg := clusterRole(t, f, clustertest.URL(nodes, i), true, bin, agentState)
		edges = append(edges, clustertest.Start(t, bin, fmt.Sprintf("e%d", i), "edge", "--config", cfg, "--id", fmt.Sprintf("e%d", i)))
	}
	for i := range 3 {
		id := fmt.Sprintf("w%d", i+1)
		cfg := clusterRole(t, f, clustertest.URL(nodes, i+2), false, bin, agentState)
		workers = append(workers, clustertest.Start(t, bin, id, "worker", "--config", cfg, "--id", id))
	}
	edgeReady := func(e *clustertest.Proc) {
		e.WaitRecord("serving Slack", func(r clustertest.Record) bool {
			return r.Msg() == "serving a channel to the workers" && r.Str("platform") == Platform
		})
	}
	workerReady := func(w *clustertest.Proc) {
		w.WaitRecord("Slack enabled", func(r clustertest.Record) bool {
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
	if err := f.waitFor(clustertest.WaitCtx(t), "both edges' sockets", func() bool { return len(f.sockets.open) >= 2 }); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster up: %v", time.Since(began).Round(time.Millisecond))

	answered := func(th *string, text string) func() bool {
		return func() bool {
			for _, m := range f.msgs {
				if m.BotID == f.botID && m.ThreadTS == *th && m.Text == text {
					return true
				}
			}
			return false
		}
	}
	// Every thread prompts, one echo after the other, until the restarts
	// are over; the first message opens the thread.
	var (
		over    atomic.Bool
		mu      sync.Mutex
		threads = make([]string, n+1)   // the last: the killed worker's turn
		prompts = map[string][]string{} // thread → the texts it asked echoed
		inChan  = map[string]string{}   // thread → its channel
		wg      sync.WaitGroup
		errs    = make(chan error, n)
	)
	channelOf := func(i int) string { return fmt.Sprintf("C0CHAN%d", i%channels) }
	say := func(i int, text string) error {
		mu.Lock()
		th := threads[i]
		mu.Unlock()
		s, err := f.say(ctx, sayOptions{user: ann, channel: channelOf(i), thread: th, text: text, mention: true})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if th == "" {
			threads[i] = s.ts
			inChan[s.ts] = channelOf(i)
		}
		return nil
	}
	for i := range n {
		wg.Go(func() {
			for round := 0; round == 0 || !over.Load(); round++ {
				text := fmt.Sprintf("answer %d of thread %d, whole", round, i)
				if err := say(i, "echo "+text); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				th := threads[i]
				prompts[th] = append(prompts[th], text)
				mu.Unlock()
				if err := f.waitFor(clustertest.WaitCtx(t), fmt.Sprintf("thread %d's answer %d", i, round), answered(&th, text)); err != nil {
					errs <- err
					return
				}
			}
		})
	}

	// The killed worker's turn: a slow answer, its worker killed once its
	// first words are out, and the worker started again.
	const slow = 120
	whole := strings.TrimSpace(demoagent.SlowAnswer(slow))
	if err := say(n, fmt.Sprint("slow ", slow)); err != nil {
		t.Fatal(err)
	}
	victim := threads[n]
	if err := f.waitFor(clustertest.WaitCtx(t), "the slow answer's first words", func() bool {
		for _, m := range f.msgs {
			if m.BotID == f.botID && m.ThreadTS == victim && strings.Contains(m.Text, "quick brown") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
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
		mu.Unlock()
		mu.Lock()
		c := inChan[th]
		mu.Unlock()
		if _, err := f.say(ctx, sayOptions{user: ann, channel: c, thread: th, text: "echo " + text, mention: true}); err != nil {
			t.Fatal(err)
		}
	}

	// Each edge, then each worker, stopped and started again in turn; what
	// an edge did not acknowledge before it stopped Slack sends again.
	for _, e := range edges {
		if code := e.Stop(syscall.SIGTERM); code != 0 {
			t.Errorf("%s exited with %d after SIGTERM", e.Name, code)
		}
		if _, err := f.redeliverUnacked(ctx); err != nil {
			t.Fatal(err)
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
		t.Fatal(err)
	}

	// Every prompt answered once with the agent's text, and nothing else
	// said but queue notices; in a thread whose turn the kill cut off, one
	// notice, after which the cut-off prompt is answered once more (whole),
	// its answer before the notice (whole or cut short) staying.
	for _, th := range threads {
		for _, text := range prompts[th] {
			if err := f.waitFor(clustertest.WaitCtx(t), "the answer "+text, answered(&th, text)); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("all answered at %v", time.Since(began).Round(time.Millisecond))
	total := 0
	notice := sysmsg.WorkerLost{Again: true}.Body()
	queued := clustertest.Waiting(len(threads) * len(prompts))
	for i, th := range threads {
		ms := f.thread(inChan[th], th)
		var said []string
		for _, m := range ms {
			said = append(said, m.Text)
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
	}
	posts := 0
	for _, c := range f.callsTo("chat.postMessage") {
		if c.Form.Get("thread_ts") != "" {
			posts++
		}
	}
	said := 0
	for _, th := range threads {
		said += len(f.thread(inChan[th], th))
	}
	if posts != said {
		t.Errorf("%d posts in threads for %d messages there", posts, said)
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
	// Slack's posting limit is the channel's: the edges between them
	// keep to it (one edge performs a channel's posts).
	if got := f.limitedCount(); got != 0 {
		t.Errorf("the fake answered %d posts with 429", got)
	}
	t.Logf("%d threads, %d prompts answered, %d API calls, in %v", n, total, f.callCount(), time.Since(began).Round(time.Millisecond))
}

// callCount is how many Web API calls the fake has had.
func (f *fakeSlack) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}
