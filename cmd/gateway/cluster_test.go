package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/nats-io/nats.go/jetstream"
)

// asGatewayEnv makes the test binary the gateway program (TestMain calls
// main): the roles run as real processes of this build.
const asGatewayEnv = "GATEWAY_TEST_AS_MAIN"

// role is a gateway edge or worker running as a child process.
type role struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdout *lineWatch
	stderr *lineWatch
	done   chan struct{}
}

// lineWatch collects a process's output lines and lets a test wait for
// one.
type lineWatch struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func newLineWatch() *lineWatch { return &lineWatch{changed: make(chan struct{})} }

func (w *lineWatch) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		w.mu.Lock()
		w.lines = append(w.lines, sc.Text())
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
	w.mu.Lock()
	close(w.changed)
	w.changed = nil // closed for good: no more lines
	w.mu.Unlock()
}

// wait returns the first line ok accepts, waiting for it up to a minute.
func (w *lineWatch) wait(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if ok(l) {
				w.mu.Unlock()
				return l
			}
		}
		ch := w.changed
		w.mu.Unlock()
		if ch == nil {
			t.Fatalf("the process ended without %s", what)
		}
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatalf("no %s within a minute", what)
		}
	}
}

// records returns the JSON log records with message msg.
func (w *lineWatch) records(msg string) []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]any
	for _, l := range w.lines {
		var r map[string]any
		if json.Unmarshal([]byte(l), &r) == nil && r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// startRole runs `gateway <args>` with the config file; the process is
// killed when the test ends if it still runs.
func startRole(t *testing.T, name, cfgFile string, args ...string) *role {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append(args, "--config", cfgFile)...)
	cmd.Env = append(os.Environ(), asGatewayEnv+"=1")
	return startProc(t, name, cmd)
}

// startProc starts cmd, a gateway, and watches its output; it is killed
// when the test ends if it still runs, its log shown if the test failed,
// and a data race in it fails the test.
func startProc(t *testing.T, name string, cmd *exec.Cmd) *role {
	t.Helper()
	r := &role{t: t, name: name, cmd: cmd, stdout: newLineWatch(), stderr: newLineWatch(), done: make(chan struct{})}
	out, _ := cmd.StdoutPipe()
	errp, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.stdout.read(out) })
	wg.Go(func() { r.stderr.read(errp) })
	go func() { wg.Wait(); _ = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
		r.stderr.mu.Lock()
		for _, l := range r.stderr.lines {
			if strings.Contains(l, "DATA RACE") {
				t.Errorf("%s: a data race (see its log)", name)
				break
			}
		}
		r.stderr.mu.Unlock()
		if t.Failed() {
			r.stderr.mu.Lock()
			t.Logf("%s's log:\n%s", name, strings.Join(r.stderr.lines, "\n"))
			r.stderr.mu.Unlock()
		}
	})
	return r
}

// signal sends sig and waits for the process to end.
func (r *role) stop(sig syscall.Signal) {
	r.t.Helper()
	_ = r.cmd.Process.Signal(sig)
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		r.t.Fatalf("%s did not end within a minute of %v", r.name, sig)
	}
}

// clusterConfig writes a role's configuration: its own data directory,
// the cluster's NATS, JSON logs, an open web chat (an edge needs a
// configured token or open: TestEdgeWebNeedsAToken).
func clusterConfig(t *testing.T, natsURL, name string) string {
	t.Helper()
	return roleConfig(t, name, "  name: harness\n  leaseTTL: 2s\n  drainTimeout: 30s\n"+clustertest.RoleYAML(t, natsURL, ""))
}

// roleConfig writes the configuration name.yaml of a role with its own
// data directory, JSON logs, an open web chat, no metrics, and cluster
// (the lines of the cluster section, indented) in a directory of its own,
// and returns its path.
func roleConfig(t *testing.T, name, cluster string) string {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`dataDir: %s
log:
  format: json
channels:
  web:
    listen: 127.0.0.1:0
    open: true
metrics:
  listen: ""
cluster:
%s`, filepath.Join(dir, "data"), cluster)
	f := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// web is the web chat's API, callable from any goroutine (errors are
// returned, not fatal).
type webAPI struct {
	base  string
	token string // sent as "Authorization: Bearer" when set
}

// webAPIAt is the API of the chat at the printed URL u, with its token.
func webAPIAt(u string) webAPI {
	base, query, _ := strings.Cut(u, "?")
	v, _ := url.ParseQuery(query)
	return webAPI{base: base, token: v.Get("token")}
}

// do sends req with the token.
func (a webAPI) do(c *http.Client, req *http.Request) (*http.Response, error) {
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	return c.Do(req)
}

func (a webAPI) post(path string, body any) (map[string]any, error) {
	b, _ := json.Marshal(body)
	// Bounded: a post the edge never answers (it answers once the event
	// is stored) fails the test with the roles' logs instead of hanging
	// it until the package's timeout (seen once in CI under load).
	client := http.Client{Timeout: time.Minute}
	req, _ := http.NewRequest("POST", a.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.do(&client, req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("POST %s: %s %v", path, resp.Status, out)
	}
	return out, nil
}

func (a webAPI) messages(th string) ([]webMessage, error) {
	req, _ := http.NewRequest("GET", a.base+"api/threads/"+th+"/messages", nil)
	resp, err := a.do(http.DefaultClient, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct{ Messages []webMessage }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body.Messages, nil
}

// waitFor reads the thread's live events until a message ok accepts
// shows, or a minute passed.
func (a webAPI) waitFor(th string, ok func(webMessage) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.base+"api/threads/"+th+"/events", nil)
	resp, err := a.do(http.DefaultClient, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, found := strings.CutPrefix(line, "event: "); found {
			event = v
			continue
		}
		var m webMessage
		if v, found := strings.CutPrefix(line, "data: "); found && event == "message" && json.Unmarshal([]byte(v), &m) == nil && ok(m) {
			return nil
		}
	}
	return fmt.Errorf("thread %s: no such message within a minute", th)
}

// answers are the thread's assistant text messages.
func answers(ms []webMessage) []string {
	var out []string
	for _, m := range ms {
		if m.Role == "assistant" && m.Kind == "text" {
			out = append(out, m.Text)
		}
	}
	return out
}

// The roles as real processes on an embedded JetStream node: one edge
// serving the web chat, two workers with the demo agent. Ten threads
// prompting at once each get exactly one complete answer, from one
// worker; a worker killed mid-turn has its threads answered by the other
// (the turn it cut off said in the thread and answered again, whole, with
// no prompt sent again; the new session said in the thread); a worker
// told to stop mid-turn finishes the turn and releases its threads.
func TestClusterRoles(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()

	edge := startRole(t, "edge", clusterConfig(t, url, "edge"), "edge", "--id", "e1")
	line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	api := webAPIAt(line[strings.Index(line, "http"):])
	workers := map[string]*role{}
	for _, id := range []string{"w1", "w2"} {
		workers[id] = startRole(t, id, clusterConfig(t, url, id), "worker", "--id", id)
	}
	for id, w := range workers {
		w.stdout.wait(t, id+" running", func(l string) bool { return strings.Contains(l, "running") })
	}

	// Ten threads at once.
	const threads = 10
	ths := make([]string, threads)
	var wg sync.WaitGroup
	// Room for the second round too: every thread may be on the worker
	// that dies (one worker can take the whole burst), and the victim's
	// whole answer is waited for besides, before any is read.
	errs := make(chan error, threads+1)
	for i := range ths {
		out, err := api.post("api/threads", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		ths[i] = out["id"].(string)
	}
	want := func(i int, round string) string { return fmt.Sprintf("answer %s of thread %d, whole", round, i) }
	for i, th := range ths {
		wg.Go(func() {
			if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo " + want(i, "one")}); err != nil {
				errs <- err
				return
			}
			errs <- api.waitFor(th, func(m webMessage) bool { return m.Role == "assistant" && m.Text == want(i, "one") })
		})
	}
	wg.Wait()
	for range ths {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, th := range ths {
		ms, err := api.messages(th)
		if err != nil {
			t.Fatal(err)
		}
		if got := answers(ms); len(got) != 1 || got[0] != want(i, "one") {
			t.Errorf("thread %d: answers %q, want exactly %q", i, got, want(i, "one"))
		}
	}
	// Each thread's events were taken by one worker.
	owner := map[string]string{} // lease key (platform/channel/thread) → worker
	for id, w := range workers {
		for _, r := range w.stderr.records("taking an event") {
			th, _ := r["thread"].(string)
			if o, ok := owner[th]; ok && o != id {
				t.Errorf("thread %s answered by %s and %s", th, o, id)
			}
			owner[th] = id
		}
	}
	if len(owner) != threads {
		t.Fatalf("%d threads taken by the workers, want %d: %v", len(owner), threads, owner)
	}
	byWorker := map[string][]int{}
	for i, th := range ths {
		for k, id := range owner {
			if strings.HasSuffix(k, "/"+th) {
				byWorker[id] = append(byWorker[id], i)
			}
		}
	}
	// Which worker takes which threads is placement's (its spread over a
	// burst is cluster's TestPlacementBurstSpreads): on a loaded machine a
	// worker may not see the other yet when the burst comes, and take all.
	// The one that holds threads dies; the other takes them over.
	dead, live := "w1", "w2"
	if len(byWorker[dead]) == 0 {
		dead, live = live, dead
	}
	t.Logf("threads by worker: %v; %s dies, %s takes over", byWorker, dead, live)
	if len(byWorker[live]) == 0 && len(byWorker[dead]) < 2 {
		t.Fatalf("want two threads on %s to kill one turn and drain another: %v", dead, byWorker)
	}

	// The dead worker dies mid-turn: its threads' next prompts are answered
	// by the live one, in a new session (the demo agent's sessions are in the
	// dead worker's directory), and the turn it cut off is answered again
	// there, whole, before them.
	victim := byWorker[dead][0]
	const slow = 120
	if _, err := api.post("api/threads/"+ths[victim]+"/messages", map[string]string{"author": "ann", "text": fmt.Sprint("slow ", slow)}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(ths[victim], func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") }); err != nil {
		t.Fatal(err)
	}
	workers[dead].stop(syscall.SIGKILL)
	for _, i := range byWorker[dead] {
		th := ths[i]
		wg.Go(func() {
			if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo " + want(i, "two")}); err != nil {
				errs <- err
				return
			}
			errs <- api.waitFor(th, func(m webMessage) bool { return m.Role == "assistant" && m.Text == want(i, "two") })
		})
	}
	whole := strings.TrimSpace(demoagent.SlowAnswer(slow))
	wg.Go(func() {
		errs <- api.waitFor(ths[victim], func(m webMessage) bool {
			return m.Role == "assistant" && m.Kind == "text" && strings.TrimSpace(m.Text) == whole
		})
	})
	wg.Wait()
	for range len(byWorker[dead]) + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	notice := sysmsg.NewSession{}.Body()
	for _, i := range byWorker[dead] {
		ms, err := api.messages(ths[i])
		if err != nil {
			t.Fatal(err)
		}
		told := 0
		for _, m := range ms {
			if strings.Contains(m.Text, notice) {
				told++
			}
		}
		cut, sendAgain, again := 0, 0, 0
		for _, m := range ms {
			if strings.Contains(m.Text, sysmsg.WorkerLost{Again: true}.Body()) {
				cut++
			}
			if strings.Contains(m.Text, sysmsg.WorkerLost{}.Body()) {
				sendAgain++
			}
			if m.Role == "assistant" && m.Kind == "text" && strings.TrimSpace(m.Text) == whole {
				again++
			}
		}
		if want := map[bool]int{true: 1}[i == victim]; cut != want || sendAgain != 0 || again != want {
			t.Errorf("thread %d: told %d times that its turn was cut off and is answered again (want %d), %d times to send it again (want 0); the cut-off prompt answered whole %d times (want %d): %+v",
				i, cut, want, sendAgain, again, want, ms)
		}
		if told != 1 {
			t.Errorf("thread %d moved to %s: told %d times that its session is new (%q), want once: %+v", i, live, told, notice, ms)
		}
		if got := answers(ms); got[len(got)-1] != want(i, "two") {
			t.Errorf("thread %d: last answer %q, want %q", i, got[len(got)-1], want(i, "two"))
		}
	}
	taken := map[string]bool{}
	for _, r := range workers[live].stderr.records("taking an event") {
		th, _ := r["thread"].(string)
		taken[th] = true
	}
	for _, i := range byWorker[dead] {
		if !takenSuffix(taken, ths[i]) {
			t.Errorf("thread %d's prompt after the kill was not taken by %s", i, live)
		}
	}

	// The live worker told to stop mid-turn: the turn finishes, then its
	// leases go. Its first thread, or one it took over (not the victim:
	// the text its killed turn left would pass the wait below at once).
	mid := byWorker[dead][len(byWorker[dead])-1]
	if len(byWorker[live]) > 0 {
		mid = byWorker[live][0]
	}
	if _, err := api.post("api/threads/"+ths[mid]+"/messages", map[string]string{"author": "ann", "text": "slow 30"}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(ths[mid], func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") }); err != nil {
		t.Fatal(err)
	}
	workers[live].stop(syscall.SIGTERM)
	if code := workers[live].cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("%s exited with %d after SIGTERM, want 0", live, code)
	}
	ms, err := api.messages(ths[mid])
	if err != nil {
		t.Fatal(err)
	}
	last := answers(ms)[len(answers(ms))-1]
	if words := len(strings.Fields(last)); words != 30 {
		t.Errorf("the turn under way when %s was told to stop delivered %d words, want all 30: %q", live, words, last)
	}
	if len(workers[live].stderr.records("drained: no turn runs")) != 1 {
		t.Errorf("%s did not say it drained", live)
	}
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(t.Context(), "harness_leases")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(t.Context())
	if err != nil && err != jetstream.ErrNoKeysFound {
		t.Fatal(err)
	}
	for _, k := range keys {
		e, err := kv.Get(t.Context(), k)
		if err == nil && strings.Contains(string(e.Value()), `"`+live+`"`) {
			t.Errorf("%s still holds a lease after it stopped: %s", live, e.Value())
		}
	}

	// A thread that leaves a worker's memory (idle) is released: w3
	// evicts at once once its agent is stopped.
	w3cfg := clusterConfig(t, url, "w3")
	w3 := startRole(t, "w3", w3cfg, "worker", "--id", "w3", "--set", "agents.idleTimeout=1s", "--set", "threads.evictAfter=1ms")
	w3.stdout.wait(t, "w3 running", func(l string) bool { return strings.Contains(l, "running") })
	if _, err := api.post("api/threads/"+ths[mid]+"/messages", map[string]string{"author": "ann", "text": "echo " + want(mid, "three")}); err != nil {
		t.Fatal(err)
	}
	if err := api.waitFor(ths[mid], func(m webMessage) bool { return m.Role == "assistant" && m.Text == want(mid, "three") }); err != nil {
		t.Fatal(err)
	}
	w3.stderr.wait(t, "the idle thread released", func(l string) bool { return strings.Contains(l, `"idle thread released"`) })
	w3.stop(syscall.SIGKILL) // a release it did not make would outlive it by the TTL
	if _, err := kv.Get(t.Context(), leaseKey(ths[mid])); err != jetstream.ErrKeyNotFound {
		t.Errorf("the evicted thread's lease: %v, want released", err)
	}

	// The edge stops on SIGTERM, cleanly.
	edge.stop(syscall.SIGTERM)
	if code := edge.cmd.ProcessState.ExitCode(); code != 0 || len(edge.stderr.records("edge stopped")) != 1 {
		t.Errorf("the edge exited with %d after SIGTERM (stopped said %d times)", code, len(edge.stderr.records("edge stopped")))
	}
}

func takenSuffix(taken map[string]bool, th string) bool {
	for k := range taken {
		if strings.HasSuffix(k, "/"+th) {
			return true
		}
	}
	return false
}

// The roles are listed by gateway --help, have their own --help, and
// refuse to start without cluster.nats.url, naming the key.
func TestRolesNeedNATS(t *testing.T) {
	out, _, err := runCLI(t, "", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"edge", "worker"} {
		if !strings.Contains(out, "\n  "+role+" ") {
			t.Errorf("gateway --help does not list %s:\n%s", role, out)
		}
		_, errOut, err := runCLI(t, "", role, "--help")
		if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut, "usage: gateway "+role) || !strings.Contains(errOut, "-id") {
			t.Errorf("gateway %s --help: %v\n%s", role, err, errOut)
		}
		dir := t.TempDir()
		_, _, err = runCLI(t, "", role, "--set", "dataDir="+dir)
		if err == nil || !strings.Contains(err.Error(), "cluster.nats.url") {
			t.Errorf("gateway %s without cluster.nats.url: %v, want an error naming the key", role, err)
		}
		_, _, err = runCLI(t, "", role, "--id", "a.b", "--set", "dataDir="+dir)
		if err == nil || !strings.Contains(err.Error(), `--id "a.b"`) {
			t.Errorf("gateway %s --id a.b: %v, want the id refused", role, err)
		}
	}
}

// An edge does not start without its signing key, nor a worker without
// the edges' keys: a cluster whose workers took unsigned events would
// let whoever reaches the inbound stream speak as anyone.
func TestRolesNeedSigningKeys(t *testing.T) {
	for role, key := range map[string]string{"edge": "cluster.signingKey", "worker": "cluster.edgeKeys"} {
		_, _, err := runCLI(t, "", role, "--id", "r1", "--set", "dataDir="+t.TempDir(), "--set", "metrics.listen=",
			"--set", "channels.web.listen=127.0.0.1:0", "--set", "channels.web.open=true", "--set", "cluster.nats.url=nats://127.0.0.1:1")
		if err == nil || !strings.HasPrefix(err.Error(), key+":") {
			t.Errorf("gateway %s without %s: %v, want an error naming it", role, key, err)
		}
	}
}

// leaseKey is the lease bucket's key of a web chat thread (cluster's
// encoding of the thread's string).
func leaseKey(th string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("web/local/" + th))
}
