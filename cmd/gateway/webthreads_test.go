package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// logWatch passes records on and lets a test wait for a message: the
// gateway's own account of what it did, as it happens.
type logWatch struct {
	slog.Handler
	w *watched
}

type watched struct {
	mu      sync.Mutex
	seen    []slog.Record
	changed chan struct{} // closed and replaced on every record
}

func newLogWatch(t *testing.T) (*slog.Logger, *watched) {
	w := &watched{changed: make(chan struct{})}
	return slog.New(&logWatch{Handler: testLogger(t).Handler(), w: w}), w
}

func (h *logWatch) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.Handler.Enabled(ctx, l)
}

func (h *logWatch) Handle(ctx context.Context, r slog.Record) error {
	h.w.mu.Lock()
	h.w.seen = append(h.w.seen, r.Clone())
	close(h.w.changed)
	h.w.changed = make(chan struct{})
	h.w.mu.Unlock()
	if h.Handler.Enabled(ctx, r.Level) {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

func (h *logWatch) WithAttrs(as []slog.Attr) slog.Handler {
	return &logWatch{Handler: h.Handler.WithAttrs(as), w: h.w}
}

func (h *logWatch) WithGroup(name string) slog.Handler {
	return &logWatch{Handler: h.Handler.WithGroup(name), w: h.w}
}

// next waits for the n-th (from 1) record with message msg and returns
// its attributes as text.
func (w *watched) next(t *testing.T, msg string, n int) map[string]string {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		w.mu.Lock()
		found := 0
		for _, r := range w.seen {
			if r.Message != msg {
				continue
			}
			if found++; found == n {
				attrs := map[string]string{}
				r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
				w.mu.Unlock()
				return attrs
			}
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("no log record %q (#%d)", msg, n)
		}
	}
}

func (c client) delete(path string) int {
	c.t.Helper()
	req, _ := http.NewRequest("DELETE", c.base+path, nil)
	c.auth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("DELETE %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// alive reports whether process pid still exists (the gateway reaps its
// agents, so an exited one is gone).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// TestWebDeleteEndsTheThreadsAgent deletes two web threads, one idle and
// one in the middle of a turn: each one's agent process is gone after it,
// its binding is no longer in the store (the session is never resumed),
// and the other threads go on.
func TestWebDeleteEndsTheThreadsAgent(t *testing.T) {
	cfg, f := testConfig(t, "")
	log, w := newLogWatch(t)
	ctx, cancel := context.WithCancel(context.Background())
	g, err := start(ctx, cfg, f, log, hooks{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := g.wait(); err != nil {
			t.Errorf("gateway stopped with %v", err)
		}
	})
	c := webClient(t, g)
	bound := func(th string) bool {
		t.Helper()
		_, ok := webBinding(t, g, th)
		return ok
	}

	idle := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+idle+"/messages", map[string]string{"author": "ann", "text": "echo one"})
	c.waitMessage(idle, "the answer", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "one" })
	c.waitIdle(idle)
	idlePid := w.next(t, "agent started", 1)["pid"]
	busy := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+busy+"/messages", map[string]string{"author": "ann", "text": "slow 400"})
	c.waitMessage(busy, "streaming", func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") })
	busyPid := w.next(t, "agent started", 2)["pid"]
	other := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+other+"/messages", map[string]string{"author": "ann", "text": "echo two"})
	c.waitMessage(other, "the answer", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "two" })
	if !bound(idle) || !bound(busy) || !bound(other) {
		t.Fatal("a thread that ran a turn has no binding")
	}

	for i, th := range []string{idle, busy} {
		if got := c.delete("api/threads/" + th); got != http.StatusNoContent {
			t.Fatalf("DELETE %s = %d, want 204", th, got)
		}
		done := w.next(t, "thread deleted: agent stopped and binding forgotten", i+1)
		if !strings.Contains(done["thread"], th) {
			t.Fatalf("deleted %s, the gateway says it deleted %v", th, done)
		}
	}
	for _, pid := range []string{idlePid, busyPid} {
		var n int
		if _, err := fmt.Sscan(pid, &n); err != nil || n <= 0 {
			t.Fatalf("agent pid %q", pid)
		}
		if alive(n) {
			t.Errorf("the agent process %d of a deleted thread is still running", n)
		}
	}
	if bound(idle) || bound(busy) {
		t.Error("a deleted thread's binding is still in the store: its session would be resumed")
	}
	raw, err := os.ReadFile(filepath.Join(cfg.DataDir, "agents.pids"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(raw), "\n"); lines != 1 {
		t.Errorf("agents.pids holds %d agents, want only the remaining thread's:\n%s", lines, raw)
	}

	// The remaining thread still works, with its agent.
	c.post("api/threads/"+other+"/messages", map[string]string{"author": "ann", "text": "echo three"})
	c.waitMessage(other, "the answer", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "three" })
	if !bound(other) {
		t.Error("the remaining thread lost its binding")
	}
}

// twoAgents is a configuration with two entries of the demo agent under
// different names; "first" is the default.
func twoAgents(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return fmt.Sprintf("agents:\n  default: first\n  list:\n    first:\n      command: [%q, demo-agent, --state-dir, %q]\n    second:\n      command: [%q, demo-agent, --state-dir, %q]\n",
		exe, filepath.Join(dir, "first"), exe, filepath.Join(dir, "second"))
}

// TestWebNewThreadPicksAgent: the web chat offers the agents of
// agents.list (the default first); a new thread's first message picks one
// and the thread runs it; a thread keeps its agent; a name that is not
// offered is refused with the names that are.
func TestWebNewThreadPicksAgent(t *testing.T) {
	cfg, f := testConfig(t, twoAgents(t))
	g := startGateway(t, cfg, f, hooks{})
	c := webClient(t, g)
	resp, err := c.get("api/me")
	if err != nil {
		t.Fatal(err)
	}
	var me struct{ Agents []string }
	err = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if err != nil || strings.Join(me.Agents, ",") != "first,second" {
		t.Fatalf("GET /api/me agents = %v (%v), want [first second]", me.Agents, err)
	}
	agentOf := func(th string) string {
		t.Helper()
		b, ok := webBinding(t, g, th)
		if !ok {
			t.Fatalf("%s has no binding", th)
		}
		return b.Agent
	}
	chat := func(th, agent, text string) {
		t.Helper()
		c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo " + text, "agent": agent})
		c.waitMessage(th, text, func(m webMessage) bool { return m.Role == "assistant" && m.Text == text })
	}

	picked := c.post("api/threads", map[string]any{})["id"].(string)
	chat(picked, "second", "one")
	plain := c.post("api/threads", map[string]any{})["id"].(string)
	chat(plain, "", "two")
	chat(picked, "first", "three") // bound: it keeps its agent
	if got := agentOf(picked); got != "second" {
		t.Errorf("the thread that picked second runs %q", got)
	}
	if got := agentOf(plain); got != "first" {
		t.Errorf("the thread that picked nothing runs %q, want the default, first", got)
	}

	refused := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+refused+"/messages", map[string]string{"author": "ann", "text": "echo four", "agent": "claude"})
	n := c.waitMessage(refused, "the refusal", func(m webMessage) bool { return m.Role == "system" })
	if !strings.Contains(n.Text, `"claude"`) || !strings.Contains(n.Text, "first, second") {
		t.Errorf("refusal %q does not name the wrong agent and the allowed ones", n.Text)
	}
	if _, ok := webBinding(t, g, refused); ok {
		t.Error("a refused pick started an agent")
	}
}

// TestBrowserNewThreadPicksAgent: in the page, a new thread shows the
// agents to pick from (two entries of the demo agent, "first" the
// default); picking the second and sending runs it in that thread, and
// the header then shows it instead of the choice.
func TestBrowserNewThreadPicksAgent(t *testing.T) {
	b := newTab(t)
	cfg, f := testConfig(t, twoAgents(t))
	g := startGateway(t, cfg, f, hooks{})

	b.do("open the page", chromedp.Navigate(g.webURL), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	b.do("no name question", chromedp.Evaluate[chromedp.Void](`localStorage.setItem("acpgw.asked", "1"), 0`))
	b.waitFor("the agents to pick", `!document.querySelector("#pick-agent").hidden &&
		[...document.querySelectorAll("#pick-agent option")].map(o => o.value).join() === "first,second" &&
		document.querySelector("#pick-agent").value === "first" && document.querySelector("#thread-agent").hidden`)
	b.do("pick the second agent", chromedp.SetValue(chromedp.CSS("#pick-agent"), "second"))
	b.shot("desktop-new-thread-agent")
	b.send("echo picked")
	b.waitFor("the answer", `[...document.querySelectorAll('.msg[data-role="assistant"] .text')].some(e => e.textContent === "picked")`)
	b.waitFor("the thread's agent in the header, the choice gone", `document.querySelector("#thread-agent").textContent === "second" &&
		!document.querySelector("#thread-agent").hidden && document.querySelector("#pick-agent").hidden`)
	th := strings.TrimPrefix(eval[string](b, `location.hash`), "#")
	bd, ok := webBinding(t, g, th)
	if !ok || bd.Agent != "second" {
		t.Fatalf("binding of %s = %+v, %v; want the agent second", th, bd, ok)
	}

	// The next new thread offers the default again.
	b.do("new thread", chromedp.Click(chromedp.CSS("#new-thread")))
	b.waitFor("the choice again, the default picked", `!document.querySelector("#pick-agent").hidden && document.querySelector("#pick-agent").value === "first"`)
}

// shot saves a screenshot as name.png in $WEB_SCREENSHOTS (for a person
// to look at), else in the test's temporary directory.
func (b tab) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("WEB_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}

func eval[T any](b tab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// TestWebAgentsFollowReload: after a configuration reload, GET /api/me
// offers the agents of the new agents.list, not those of the start.
func TestWebAgentsFollowReload(t *testing.T) {
	cfg, f := testConfig(t, twoAgents(t))
	reloaded := make(chan struct{}, 4)
	g := startGateway(t, cfg, f, hooks{reloaded: reloaded})
	c := webClient(t, g)
	agents := func() string {
		t.Helper()
		return strings.Join(offeredAgents(t, c.get), ",")
	}
	if got := agents(); got != "first,second" {
		t.Fatalf("GET /api/me agents = %s, want first,second", got)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	third := fmt.Sprintf("agents:\n  default: second\n  list:\n    second:\n      command: [%q, demo-agent]\n    third:\n      command: [%q, demo-agent]\n", exe, exe)
	if err := os.WriteFile(f.config, []byte(third), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloaded:
	case <-t.Context().Done():
		t.Fatal("the configuration change was not applied")
	}
	if got := agents(); got != "second,third" {
		t.Errorf("GET /api/me agents after the reload = %s, want second,third", got)
	}
}

// offeredAgents returns the agents the web chat's /api/me offers, read
// with get (the path under the chat's base).
func offeredAgents(t *testing.T, get func(path string) (*http.Response, error)) []string {
	t.Helper()
	resp, err := get("api/me")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct{ Agents []string }
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil {
		t.Fatal(err)
	}
	return me.Agents
}
