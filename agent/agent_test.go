package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/projector"
)

// recorder is a Handler that keeps every update.
type recorder struct {
	mu      sync.Mutex
	updates []projector.Update
	history []bool
}

func (r *recorder) Update(u projector.Update, history bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
	r.history = append(r.history, history)
}

func (r *recorder) Permission(ctx context.Context, req agent.PermissionRequest) (string, bool) {
	return "", false
}

func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, u := range r.updates {
		if u.Tag == projector.TagAgentMessageChunk {
			out = append(out, u.Text)
		}
	}
	return out
}

// frames is a FrameSink that keeps every frame.
type frames struct {
	mu    sync.Mutex
	lines []string
	dirs  []agent.Direction
}

func (f *frames) sink(dir agent.Direction, line []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines = append(f.lines, string(line))
	f.dirs = append(f.dirs, dir)
}

func rawSpec(env ...string) agent.Spec {
	exe, _ := os.Executable()
	return agent.Spec{Name: "raw", Command: []string{exe, "-test.run=^$"}, Env: append([]string{"RAW_AGENT=1", "GORACE=atexit_sleep_ms=0"}, env...)}
}

func start(t *testing.T, spec agent.Spec, o agent.Options) *agent.Process {
	t.Helper()
	if o.Logger == nil {
		o.Logger = testlog.FailOnSDKError(t)
	}
	p, err := agent.Start(t.Context(), spec, o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return p
}

func TestUpdatesBeforeSessionNewAreKept(t *testing.T) {
	var fr frames
	p := start(t, rawSpec(), agent.Options{Frames: fr.sink})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	if s.ID != "raw-1" {
		t.Errorf("session id = %q", s.ID)
	}
	rec.mu.Lock()
	n := len(rec.updates)
	var tags []projector.Tag
	for _, u := range rec.updates {
		tags = append(tags, u.Tag)
	}
	rec.mu.Unlock()
	if n != 2 || tags[0] != projector.TagAvailableCommands || tags[1] != projector.TagAgentMessageChunk {
		t.Errorf("updates delivered at session/new = %v, want the commands and the early chunk", tags)
	}
	// The wire order: the updates come before the response that names the session.
	fr.mu.Lock()
	defer fr.mu.Unlock()
	var order []string
	for i, l := range fr.lines {
		switch {
		case strings.Contains(l, `"method":"initialize"`):
			order = append(order, fr.dirs[i].String()+" initialize")
		case strings.Contains(l, `"method":"session/new"`):
			if !strings.Contains(l, `"mcpServers":[]`) {
				t.Errorf("session/new sent without an empty mcpServers: %s", l)
			}
			order = append(order, fr.dirs[i].String()+" session/new")
		case strings.Contains(l, `"sessionUpdate"`):
			order = append(order, fr.dirs[i].String()+" update")
		case strings.Contains(l, `"sessionId":"raw-1"}`):
			order = append(order, fr.dirs[i].String()+" new-result")
		}
	}
	want := "to-agent initialize,to-agent session/new,from-agent update,from-agent update,from-agent new-result"
	if got := strings.Join(order, ","); got != want {
		t.Errorf("wire order\n got %s\nwant %s", got, want)
	}
}

func TestNoiseDoesNotKillTheConnection(t *testing.T) {
	var fr frames
	p := start(t, rawSpec(), agent.Options{Frames: fr.sink})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	stop, err := s.Prompt(t.Context(), "noise")
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt(noise) = %q, %v", stop, err)
	}
	texts := rec.texts()
	if len(texts) != 4 || texts[1] != "a" || len(texts[2]) != 11<<20 || texts[3] != "b" {
		t.Errorf("chunks: got %d, want early, a, 11 MiB of x, b", len(texts))
	}
	var unknown *projector.Update
	rec.mu.Lock()
	for i := range rec.updates {
		if rec.updates[i].RawTag == "future_widget_update" {
			unknown = &rec.updates[i]
		}
	}
	rec.mu.Unlock()
	if unknown == nil || unknown.Tag != projector.TagUnknown {
		t.Errorf("unknown tag update = %+v, want it delivered as TagUnknown (not mis-decoded by shape)", unknown)
	}
	// The connection is alive.
	stop, err = s.Prompt(t.Context(), "hello")
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt(hello) after noise = %q, %v", stop, err)
	}
	if got := rec.texts(); got[len(got)-1] != "echo: hello" {
		t.Errorf("last chunk = %q", got[len(got)-1])
	}
	// Every line is in the event sink, unchanged, malformed and huge ones too.
	fr.mu.Lock()
	defer fr.mu.Unlock()
	var malformed, huge int
	for _, l := range fr.lines {
		if l == `{this is not json` {
			malformed++
		}
		if len(l) > 11<<20 {
			huge++
		}
	}
	if malformed != 1 || huge != 2 {
		t.Errorf("event sink has %d malformed and %d huge lines, want 1 and 2", malformed, huge)
	}
}

// queueHandler hands text chunks to a queue that nobody drains during the
// turn, as the session does for a thread whose channel is stalled (the
// end-to-end burst test in package session uses a really slow channel).
type queueHandler struct {
	mu    sync.Mutex
	queue []string
}

func (g *queueHandler) Update(u projector.Update, history bool) {
	if u.Tag != projector.TagAgentMessageChunk {
		return
	}
	g.mu.Lock()
	g.queue = append(g.queue, u.Text)
	g.mu.Unlock()
}

func (g *queueHandler) Permission(context.Context, agent.PermissionRequest) (string, bool) {
	return "", false
}

func TestBurstIntoAStalledConsumer(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	g := &queueHandler{}
	s, err := p.NewSession(t.Context(), t.TempDir(), g)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	const n = 10000
	stop, err := s.Prompt(t.Context(), fmt.Sprintf("burst %d", n))
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt(burst) = %q, %v: the connection did not survive", stop, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.queue[1:] // after the early chunk
	if len(q) != n {
		t.Fatalf("got %d chunks, want %d", len(q), n)
	}
	for i, c := range q {
		if c != fmt.Sprintf("%d ", i) {
			t.Fatalf("chunk %d = %q: out of order", i, c)
		}
	}
	if p.Err() != nil {
		t.Errorf("process died: %v", p.Err())
	}
}

func TestCrashEndsThePrompt(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	_, err = s.Prompt(t.Context(), "die")
	if !errors.Is(err, agent.ErrExited) {
		t.Fatalf("Prompt(die) error = %v, want ErrExited", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error %q does not name the exit status", err)
	}
	if got := rec.texts(); got[len(got)-1] != "last words" {
		t.Errorf("the text written before the crash was lost: %q", got)
	}
	if _, err := s.Prompt(t.Context(), "hello"); !errors.Is(err, agent.ErrExited) {
		t.Errorf("Prompt after exit = %v, want ErrExited", err)
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	p, err := agent.Start(t.Context(), rawSpec("RAW_AGENT_IGNORE_EOF=1"), agent.Options{Logger: testlog.FailOnSDKError(t), StopGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	var rec recorder
	if _, err := p.NewSession(t.Context(), t.TempDir(), &rec); err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !strings.Contains(p.Err().Error(), "killed") {
		t.Errorf("exit = %v, want killed by SIGKILL (it ignores EOF and SIGTERM)", p.Err())
	}
}

func TestStartFailsClearly(t *testing.T) {
	_, err := agent.Start(t.Context(), agent.Spec{Name: "nope", Command: []string{"/nonexistent/agent"}}, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), `start agent "nope"`) {
		t.Errorf("Start error = %v", err)
	}
	if _, err := agent.Start(t.Context(), agent.Spec{Name: "empty"}, agent.Options{}); err == nil {
		t.Error("Start with no command succeeded")
	}
	// A missing working directory is named as such, not as a missing
	// program (exec says "fork/exec PROGRAM: no such file or directory").
	spec := rawSpec()
	spec.Dir = filepath.Join(t.TempDir(), "gone")
	_, err = agent.Start(t.Context(), spec, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), "working directory (cwd) "+spec.Dir) {
		t.Errorf("Start in a missing directory: %v, want the directory named", err)
	}
}

// signalHandler closes started on the first update after arm.
type signalHandler struct {
	recorder
	once    sync.Once
	started chan struct{}
}

func (h *signalHandler) Update(u projector.Update, history bool) {
	h.recorder.Update(u, history)
	if u.Text == "0 " {
		h.once.Do(func() { close(h.started) })
	}
}

func TestOnePromptInFlight(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	h := &signalHandler{started: make(chan struct{})}
	s, err := p.NewSession(t.Context(), t.TempDir(), h)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := s.Prompt(t.Context(), "burst 20000")
		first <- err
	}()
	<-h.started // the first prompt is in flight
	if _, err := s.Prompt(t.Context(), "hello"); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("second prompt while one is in flight: %v, want ErrBusy", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first prompt: %v", err)
	}
	if _, err := s.Prompt(t.Context(), "hello"); err != nil {
		t.Errorf("prompt after the first ended: %v", err)
	}
}

// TestPromptStartedAtTheEndOfOne: a prompt started as soon as the one
// before it was answered (the thread's next queued message, started by
// its owner on hearing the turn's end) is sent, not refused with ErrBusy
// while the first one's last steps are still under way.
func TestPromptStartedAtTheEndOfOne(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	s, err := p.NewSession(t.Context(), t.TempDir(), &recorder{})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	waits := make(chan struct{}, 1)
	agent.SetPromptWaitsHook(t, func() { waits <- struct{}{} })
	second := make(chan error, 1)
	first := make(chan error, 1)
	s.PromptThen(t.Context(), "hello", nil, func(_ string, err error) {
		first <- err
		go s.PromptThen(t.Context(), "hello again", nil, func(_ string, err error) { second <- err })
		// The first prompt's end waits until the second one either
		// failed or waits for it: both orders are then certain.
		select {
		case err := <-second:
			second <- err
		case <-waits:
		}
	})
	if err := <-first; err != nil {
		t.Fatalf("first prompt: %v", err)
	}
	if err := <-second; err != nil {
		t.Errorf("the prompt started at the first one's end: %v, want it answered", err)
	}
}

func TestAuthenticatePrefersAnEnvMethodThatIsSet(t *testing.T) {
	var fr frames
	p := start(t, rawSpec("RAW_AGENT_AUTH=1", "RAW_OPENAI_KEY=sk-test"), agent.Options{Frames: fr.sink})
	var rec recorder
	if _, err := p.NewSession(t.Context(), t.TempDir(), &rec); err != nil {
		t.Fatalf("NewSession: %v (the browser-login method offered first must be skipped)", err)
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	var auth string
	for _, l := range fr.lines {
		if strings.Contains(l, `"method":"authenticate"`) {
			auth = l
		}
	}
	if !strings.Contains(auth, `"methodId":"openai-api-key"`) {
		t.Errorf("authenticate frame = %q", auth)
	}
}

// TestLongStderrLine: an agent that writes a stderr line of 3 MiB is still
// read (a full pipe would block it forever) and answers; the line is
// logged cut, with its length.
func TestLongStderrLine(t *testing.T) {
	var logs lockedBuffer
	p := start(t, rawSpec(), agent.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	// A wedged agent never answers: fail instead of hanging the test.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	stop, err := s.Prompt(ctx, "stderr")
	if err != nil || stop != "end_turn" {
		t.Fatalf("Prompt(stderr) = %q, %v: the agent is wedged on its stderr", stop, err)
	}
	if got := rec.texts(); got[len(got)-1] != "answered" {
		t.Errorf("last chunk = %q", got[len(got)-1])
	}
	// Both lines are logged once stderr is read; stopping the agent
	// waits for the reader.
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := p.Stop(sctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	var long, after bool
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e struct {
			Msg    string
			Line   string
			Cut    bool
			Length int
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Msg != "agent stderr" {
			continue
		}
		switch {
		case e.Cut:
			long = true
			if e.Length != 3<<20 || e.Line != strings.Repeat("e", agent.MaxStderrLine) {
				t.Errorf("long line logged as %d bytes with length %d, want %d bytes with length %d", len(e.Line), e.Length, agent.MaxStderrLine, 3<<20)
			}
		case e.Line == "after the long line":
			after = true
		}
	}
	if !long || !after {
		t.Errorf("logged the long line: %v, the line after it: %v", long, after)
	}
}

// TestSessionModesModelsAndConfig: what session/new reports about modes,
// models and config options reaches the Session as the gateway's own
// types, every field read (descriptions, categories, grouped choices).
func TestSessionModesModelsAndConfig(t *testing.T) {
	const extra = `,"modes":{"currentModeId":"code","availableModes":[{"id":"ask","name":"Ask","description":"asks first"},{"id":"code","name":"Code"}]}` +
		`,"configOptions":[` +
		`{"type":"select","id":"effort","name":"Effort","category":"thought_level","currentValue":"high","options":[{"value":"low","name":"Low"},{"value":"high","name":"High","description":"slow"}]},` +
		`{"type":"select","id":"model","name":"Model","category":"model","currentValue":"b","options":[{"group":"g1","name":"Fast ones","options":[{"value":"a","name":"A"}]},{"group":"g2","name":"Smart ones","options":[{"value":"b","name":"B"}]}]},` +
		`{"type":"boolean","id":"web","name":"Web search","description":"may search","currentValue":true}]`
	p := start(t, rawSpec("RAW_AGENT_NEW_RESULT="+extra), agent.Options{})
	s, err := p.NewSession(t.Context(), t.TempDir(), &recorder{})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	wantModes := &agent.Modes{Current: "code", Available: []agent.Mode{{ID: "ask", Name: "Ask", Description: "asks first"}, {ID: "code", Name: "Code"}}}
	// Models are the config option of category "model".
	wantModels := &agent.Models{Current: "b", Available: []agent.Model{{ID: "a", Name: "A"}, {ID: "b", Name: "B"}}}
	wantConfig := []agent.ConfigOption{
		{ID: "effort", Name: "Effort", Category: "thought_level", Kind: "select", Value: "high",
			Values: []agent.ConfigValue{{ID: "low", Name: "Low"}, {ID: "high", Name: "High", Description: "slow"}}},
		{ID: "model", Name: "Model", Category: "model", Kind: "select", Value: "b",
			Values: []agent.ConfigValue{{ID: "a", Name: "A", Group: "Fast ones"}, {ID: "b", Name: "B", Group: "Smart ones"}}},
		{ID: "web", Name: "Web search", Description: "may search", Kind: "boolean", Value: "true"},
	}
	if diff := cmp.Diff(wantModes, s.Modes); diff != "" {
		t.Errorf("Modes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantModels, s.Models); diff != "" {
		t.Errorf("Models (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantConfig, s.Config); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}

	// An agent that reports none of them leaves them nil.
	bare, err := start(t, rawSpec(), agent.Options{}).NewSession(t.Context(), t.TempDir(), &recorder{})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	if bare.Modes != nil || bare.Models != nil || bare.Config != nil {
		t.Errorf("an agent that reported nothing: Modes %v, Models %v, Config %v; want all nil", bare.Modes, bare.Models, bare.Config)
	}
}

// TestVendorNotificationIsNoError: a notification of the agent's own
// (Qwen Code's qwen/notify/session/prompt-suggestion, every turn) is
// ignored without an ERROR record (the test's logger fails on one), and
// the turn goes on.
func TestVendorNotificationIsNoError(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	if stop, err := s.Prompt(t.Context(), "vendor-notify"); err != nil || stop != "end_turn" {
		t.Fatalf("Prompt: %q, %v", stop, err)
	}
	if got := rec.texts(); !slices.Contains(got, "after") {
		t.Errorf("texts %q, want the chunk after the notifications", got)
	}
}

// ordered is a Handler that writes every update's text into one list,
// where the test writes the turn's end too, and says when n texts came.
type ordered struct {
	mu   sync.Mutex
	seen []string
	n    int
	all  chan struct{}
}

func (o *ordered) add(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, s)
	if len(o.seen) == o.n {
		close(o.all)
	}
}

func (o *ordered) Update(u projector.Update, _ bool) { o.add(u.Text) }

func (o *ordered) Permission(context.Context, agent.PermissionRequest) (string, bool) {
	return "", false
}

// The turn ends where its answer is on the wire: what the agent sends
// after answering the prompt reaches the Handler after PromptThen told
// its caller the turn ended, never before.
func TestUpdatesAfterTheAnswerComeAfterTheTurn(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	h := &ordered{all: make(chan struct{})}
	s, err := p.NewSession(t.Context(), t.TempDir(), h)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	h.mu.Lock()
	h.seen = nil // the early updates of session/new
	h.n = 1 + 1 + afterAnswer
	h.mu.Unlock()
	s.PromptThen(t.Context(), "after-answer", nil, func(stop string, err error) {
		h.add("the turn ended: " + stop)
		if err != nil {
			t.Errorf("PromptThen: %v", err)
		}
	})
	select {
	case <-h.all:
	case <-t.Context().Done():
		t.Fatal("the updates did not all come")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) < 2 || h.seen[0] != "before" || h.seen[1] != "the turn ended: end_turn" {
		t.Fatalf("order %q…, want the text before the answer, then the turn's end", h.seen[:min(len(h.seen), 5)])
	}
	for i, s := range h.seen[2:] {
		if want := fmt.Sprintf("after %d", i); s != want {
			t.Fatalf("update %d after the turn = %q, want %q", i, s, want)
		}
	}
}
