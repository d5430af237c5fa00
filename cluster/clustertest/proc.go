package clustertest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WaitTimeout bounds every wait of the harness: a record that does not
// come within it fails the test (it is a bound, not a pace: waits end on
// the record).
const WaitTimeout = 2 * time.Minute

// Build builds the gateway program (race-built when this test binary is)
// into a directory of the test and returns its path.
func Build(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the gateway needs the go tool: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "gateway")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	args = append(args, "github.com/acpgw/gateway/cmd/gateway")
	cmd := exec.Command(goTool, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// Proc is one role (gateway edge or worker) run as a process, again after
// each Restart. Its output lines, of every run, are kept; the test's
// failure shows them.
type Proc struct {
	t    testing.TB
	Name string
	bin  string
	args []string

	mu      sync.Mutex
	lines   []Line
	changed chan struct{}
	runs    int
	cmd     *exec.Cmd
	done    chan struct{} // closed when the current run ended
}

// Line is an output line of a run of the process.
type Line struct {
	Run    int    // 1 for the first start, 2 after the first Restart, …
	Stderr bool   // from stderr (the JSON log) rather than stdout
	Text   string // the line
}

// Start runs bin with args as the role name; the process is killed when the
// test ends if it still runs.
func Start(t testing.TB, bin, name string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, Name: name, bin: bin, args: args, changed: make(chan struct{})}
	p.start()
	t.Cleanup(p.cleanup)
	return p
}

func (p *Proc) start() {
	p.t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("%s: %v", p.Name, err)
	}
	p.mu.Lock()
	p.runs++
	run := p.runs
	p.cmd = cmd
	done := make(chan struct{})
	p.done = done
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { p.read(out, run, false) })
	wg.Go(func() { p.read(errp, run, true) })
	go func() { wg.Wait(); _ = cmd.Wait(); close(done); p.poke() }()
}

func (p *Proc) read(r io.Reader, run int, stderr bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, Line{Run: run, Stderr: stderr, Text: sc.Text()})
		p.mu.Unlock()
		p.poke()
	}
}

func (p *Proc) poke() {
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// Run is the number of the current (or last) run: 1, then one more after
// each Restart.
func (p *Proc) Run() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

// Stop sends sig and waits for the process to end; it returns its exit
// code (-1 when a signal ended it).
func (p *Proc) Stop(sig syscall.Signal) int {
	p.t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(WaitTimeout):
		p.t.Fatalf("%s did not end within %v of %v", p.Name, WaitTimeout, sig)
	}
	return cmd.ProcessState.ExitCode()
}

// Restart starts the process again (after Stop), with the same arguments.
func (p *Proc) Restart() {
	p.t.Helper()
	p.start()
}

// Record is a JSON log record of the process, with the run it came from.
type Record struct {
	Run    int
	Fields map[string]any
}

// Msg is the record's message.
func (r Record) Msg() string { s, _ := r.Fields["msg"].(string); return s }

// Str is the record's attribute key as a string ("" when absent).
func (r Record) Str(key string) string { s, _ := r.Fields[key].(string); return s }

// Records returns the JSON log records with message msg, of every run.
func (p *Proc) Records(msg string) []Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Record
	for _, l := range p.lines {
		if r, ok := record(l); ok && r.Msg() == msg {
			out = append(out, r)
		}
	}
	return out
}

func record(l Line) (Record, bool) {
	if !strings.HasPrefix(l.Text, "{") {
		return Record{}, false
	}
	var f map[string]any
	if json.Unmarshal([]byte(l.Text), &f) != nil {
		return Record{}, false
	}
	return Record{Run: l.Run, Fields: f}, true
}

// WaitRecord waits for a JSON log record of the current run that ok
// accepts and returns it; it fails the test when the run ends without one
// or WaitTimeout passes.
func (p *Proc) WaitRecord(what string, ok func(Record) bool) Record {
	p.t.Helper()
	var found Record
	p.wait(what, func(l Line, run int) bool {
		r, isRec := record(l)
		if l.Run == run && isRec && ok(r) {
			found = r
			return true
		}
		return false
	})
	return found
}

// WaitLine waits for an output line of the current run that contains s
// and returns it.
func (p *Proc) WaitLine(s string) string {
	p.t.Helper()
	var found string
	p.wait("a line with "+s, func(l Line, run int) bool {
		if l.Run == run && strings.Contains(l.Text, s) {
			found = l.Text
			return true
		}
		return false
	})
	return found
}

func (p *Proc) wait(what string, ok func(l Line, run int) bool) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	seen := 0
	for {
		p.mu.Lock()
		run, done, ch := p.runs, p.done, p.changed
		lines := p.lines[seen:]
		seen = len(p.lines)
		p.mu.Unlock()
		for _, l := range lines {
			if ok(l, run) {
				return
			}
		}
		select {
		case <-done:
			// the run ended: its last lines may have come with the end
			p.mu.Lock()
			rest := p.lines[seen:]
			p.mu.Unlock()
			for _, l := range rest {
				if ok(l, run) {
					return
				}
			}
			p.t.Fatalf("%s (run %d) ended without %s", p.Name, run, what)
		case <-ch:
		case <-ctx.Done():
			p.t.Fatalf("%s: no %s within %v", p.Name, what, WaitTimeout)
		}
	}
}

// cleanup kills the process if it still runs, fails the test on a data
// race it reported, and shows its output when the test failed.
func (p *Proc) cleanup() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Kill()
	<-done
	p.mu.Lock()
	defer p.mu.Unlock()
	var all []string
	raced := false
	for _, l := range p.lines {
		raced = raced || strings.Contains(l.Text, "DATA RACE")
		all = append(all, l.Text)
	}
	if raced {
		p.t.Errorf("%s: a data race (see its output)", p.Name)
	}
	if p.t.Failed() || os.Getenv("CLUSTER_LOGS") != "" {
		p.t.Logf("%s's output:\n%s", p.Name, strings.Join(all, "\n"))
	}
}
