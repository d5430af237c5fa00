package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/sandbox/egress"
	"github.com/acpgw/gateway/store"
)

// TestMain lets the test binary be the demo agent: config's built-in
// "demo" agent is this executable with the demo-agent subcommand. It is
// also "gateway mcp", which mcpgate gives agents as their MCP server.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "demo-agent" {
		os.Exit(demoagent.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(asGatewayEnv) == "1" { // the gateway binary (cluster_test.go)
		main()
		os.Exit(0) // main returns on success
	}
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" { // a sandboxed agent's parent (network full, allow)
		os.Exit(egress.RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp" { // the MCP server agents start
		os.Exit(exitStatus(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
	}
	os.Exit(m.Run())
}

func asExit(err error, ex *exitCode) bool {
	e, ok := err.(exitCode)
	if ok {
		*ex = e
	}
	return ok
}

// testConfig is the default configuration on free ports in a temporary
// data directory, optionally from a YAML file.
func testConfig(t *testing.T, yaml string) (config.Config, runFlags) {
	t.Helper()
	dir := t.TempDir()
	var f runFlags
	if yaml != "" {
		f.config = filepath.Join(dir, "gateway.yaml")
		if err := os.WriteFile(f.config, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.sets = multi{"dataDir=" + filepath.Join(dir, "data"), "channels.web.listen=127.0.0.1:0", "metrics.listen=127.0.0.1:0"}
	cfg, err := f.load()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg, f
}

// testLogger is the program's logger in tests: an error the ACP SDK logs
// fails the test; with -v everything is also written to stderr.
func testLogger(t *testing.T) *slog.Logger {
	l := testlog.FailOnSDKError(t)
	if testing.Verbose() {
		l = slog.New(slog.NewMultiHandler(slog.NewTextHandler(os.Stderr, nil), l.Handler()))
	}
	return l
}

// startGateway runs the program until the test ends.
func startGateway(t *testing.T, cfg config.Config, f runFlags, h hooks) *gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g, err := start(ctx, cfg, f, testLogger(t), h)
	if err != nil {
		cancel()
		t.Fatalf("start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- g.wait() }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gateway stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the gateway did not stop within 30 s")
		}
	})
	return g
}

// client talks to the web chat's API.
type client struct {
	t    *testing.T
	base string
	// token, if set, is sent as "Authorization: Bearer".
	token string
}

func (c client) post(path string, body any) map[string]any {
	c.t.Helper()
	status, out := c.try(path, body)
	if status >= 300 {
		c.t.Fatalf("POST %s: %d %v", path, status, out)
	}
	return out
}

// try posts body to path and returns the status and the decoded answer.
func (c client) try(path string, body any) (int, map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	c.auth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// webBinding is the stored binding of web thread th, once what the live
// threads queued for the store is written (a binding is saved beside
// the turn, not before its answer).
func webBinding(t *testing.T, g *gateway, th string) (store.Binding, bool) {
	t.Helper()
	g.router.FlushSaves(t.Context())
	b, ok, err := g.data.st.Binding(t.Context(), channels.ThreadRef{Platform: "web", Channel: web.Channel, Thread: th})
	if err != nil {
		t.Fatalf("binding of %s: %v", th, err)
	}
	return b, ok
}

// webClient is a client of g's web chat holding the token of the URL the
// gateway printed, as the one click on it gives.
func webClient(t *testing.T, g *gateway) client {
	t.Helper()
	u, err := url.Parse(g.webURL)
	if err != nil {
		t.Fatalf("the printed URL %q: %v", g.webURL, err)
	}
	tok := u.Query().Get("token")
	u.RawQuery = ""
	return client{t: t, base: u.String(), token: tok}
}

// get sends GET path with the client's token.
func (c client) get(path string) (*http.Response, error) {
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		return nil, err
	}
	c.auth(req)
	return http.DefaultClient.Do(req)
}

func (c client) auth(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

type webMessage struct {
	ID, Role, Author, Kind, Text string
	Edits                        int
}

// waitMessage reads the thread's event stream until a message satisfies
// ok, and returns it.
func (c client) waitMessage(thread, what string, ok func(webMessage) bool) webMessage {
	c.t.Helper()
	var got webMessage
	c.waitEvent(thread, what, func(event, data string) bool {
		var m webMessage
		if event == "message" && json.Unmarshal([]byte(data), &m) == nil && ok(m) {
			got = m
			return true
		}
		return false
	})
	return got
}

// waitIdle waits until the thread's agent is not working: its turn
// ended and everything of it was delivered (typing stops last).
func (c client) waitIdle(thread string) {
	c.t.Helper()
	c.waitEvent(thread, "the end of the turn", func(event, data string) bool {
		return event == "typing" && strings.Contains(data, `"typing":false`)
	})
}

// waitEvent reads the thread's live events (the state first, then the
// changes) until ok accepts one.
func (c client) waitEvent(thread, what string, ok func(event, data string) bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"api/threads/"+thread+"/events", nil)
	c.auth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("events: %v", err)
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
		if v, found := strings.CutPrefix(line, "data: "); found && ok(event, v) {
			return
		}
	}
	c.t.Fatalf("no %s in thread %s: %v", what, thread, sc.Err())
}

func TestRunServesTheWebChatWithTheDemoAgent(t *testing.T) {
	cfg, f := testConfig(t, "")
	if got := cfg.Platforms(); len(got) != 1 || got[0] != "web" {
		t.Fatalf("platforms with no configuration = %v, want [web]", got)
	}
	g := startGateway(t, cfg, f, hooks{})
	c := webClient(t, g)
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo Hello, web."})
	c.waitMessage(th, "the answer", func(m webMessage) bool { return m.Role == "assistant" && m.Text == "Hello, web." })

	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "tools"})
	tool := c.waitMessage(th, "a tool message edited in place", func(m webMessage) bool {
		return m.Kind == "tool" && m.Edits > 0 && strings.HasSuffix(m.Text, "· done")
	})
	if !strings.Contains(tool.Text, "Run ls -la") {
		t.Errorf("tool message %q", tool.Text)
	}
	// The page shows an edit before the gateway counts it; once the turn
	// is over, everything of it has been counted.
	c.waitIdle(th)

	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get("http://" + g.metricsAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %s", path, resp.Status)
		}
		if path == "/readyz" && string(body) != "web: ok\n" {
			t.Errorf("/readyz = %q, want the web chat ok", body)
		}
		if path == "/metrics" {
			for _, want := range []string{`gateway_turns_total{platform="web",stop_reason="end_turn"}`, `gateway_acp_updates_total{tag="tool_call_update"}`, `gateway_messages_total{kind="tool",op="edit",platform="web"}`, "gateway_agent_processes 1", `gateway_channel_connected{platform="web"} 1`,
				"\ngateway_threads_live 1\n", "\ngo_goroutines ", "\nprocess_resident_memory_bytes "} {
				if !strings.Contains(string(body), want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		}
	}
}

func TestReloadAppliesStreamSettings(t *testing.T) {
	cfg, f := testConfig(t, "acp:\n  stream:\n    metaMode: minimal\n")
	reloaded := make(chan struct{}, 4)
	g := startGateway(t, cfg, f, hooks{reloaded: reloaded})
	c := webClient(t, g)
	before := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+before+"/messages", map[string]string{"author": "ann", "text": "tools"})
	c.waitMessage(before, "a tool line before the reload", func(m webMessage) bool { return m.Kind == "tool" })

	// An invalid edit in between is rejected (config's Watch tests cover
	// that on its own); the valid one is applied without a restart.
	if err := os.WriteFile(f.config, []byte("acp:\n  stream:\n    metaMode: quiet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.config, []byte("acp:\n  stream:\n    metaMode: \"off\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloaded:
	case <-time.After(20 * time.Second):
		t.Fatal("the configuration change was not applied")
	}
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "tools"})
	last := c.waitMessage(th, "the final text", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "One test fails")
	})
	_ = last
	resp, err := c.get("api/threads/" + th + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Messages []webMessage }
	json.NewDecoder(resp.Body).Decode(&got)
	for _, m := range got.Messages {
		if m.Kind == "tool" {
			t.Errorf("a tool line was shown with metaMode off after the reload: %q", m.Text)
		}
	}
}

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("channels:\n  discord:\n    token: ${TEST_DISCORD_TOKEN}\n"), 0o600)
	t.Setenv("TEST_DISCORD_TOKEN", "very-secret-token")
	out, errOut, err := runCLI(t, "", "check", "--config", good)
	if err != nil {
		t.Fatalf("check: %v\n%s", err, errOut)
	}
	if strings.Contains(out, "very-secret-token") {
		t.Error("check printed the secret")
	}
	for _, want := range []string{"valid", "token: '***'", "metaMode"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("acp:\n  stream:\n    metaMode: quiet\n    maxTurnChar: 5\n"), 0o600)
	_, errOut, err = runCLI(t, "", "check", "--config", bad)
	var ex exitCode
	if !asExit(err, &ex) || ex != 1 {
		t.Fatalf("check of a bad file: err = %v, want exit status 1", err)
	}
	for _, want := range []string{`acp.stream.metaMode: must be one of off minimal verbose, got "quiet"`, "did you mean acp.stream.maxTurnChars"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check errors lack %q:\n%s", want, errOut)
		}
	}
}

// TestCheckCommandAgentMistakes: gateway check reports the mistakes
// people make with agents, each naming its key.
func TestCheckCommandAgentMistakes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, yaml, want string
	}{
		{"command as one string", "agents:\n  list:\n    x: {command: \"npx -y foo\"}\n",
			`agents.list.x.command: must be a list such as [npx, -y, foo], got the string "npx -y foo"`},
		{"missing cwd", "agents:\n  list:\n    x: {command: [npx, -y, foo], cwd: " + filepath.Join(dir, "gone") + "}\n",
			"agents.list.x.cwd: the directory " + filepath.Join(dir, "gone") + " does not exist"},
		{"overflow", "agents: {maxProcesses: 99999999999999999999}\n",
			"agents.maxProcesses: too large: want an integer of at most 9223372036854775807, got 1e+20"},
		{"discord tool style", "channels:\n  discord:\n    token: x\n    toolStyle: cards\n",
			`channels.discord.toolStyle: must be one of lines card, got "cards"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, errOut, err := runCLI(t, "", "check", "--config", path)
			var ex exitCode
			if !asExit(err, &ex) || ex != 1 {
				t.Fatalf("check: err = %v, want exit status 1", err)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("check errors lack %q:\n%s", tc.want, errOut)
			}
		})
	}
	// The same agent in an existing directory is fine.
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte("agents:\n  list:\n    x: {command: [npx, -y, foo], cwd: "+dir+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := runCLI(t, "", "check", "--config", ok); err != nil {
		t.Errorf("check of a good file: %v\n%s", err, errOut)
	}
}

// A shutdown (SIGINT/SIGTERM cancel the run context) cancels the running
// turn with session/cancel, records it, and stops the agent.
func TestShutdownCancelsRunningTurns(t *testing.T) {
	cfg, f := testConfig(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := start(ctx, cfg, f, testLogger(t), hooks{})
	if err != nil {
		t.Fatal(err)
	}
	c := webClient(t, g)
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "slow 400"})
	c.waitMessage(th, "streaming", func(m webMessage) bool { return strings.Contains(m.Text, "quick brown") })
	cancel()
	if err := g.wait(); err != nil {
		t.Fatalf("wait: %v", err)
	}
	st := e2eStore(t, cfg.DataDir)
	bs, err := st.Bindings(t.Context())
	if err != nil || len(bs) != 1 {
		t.Fatalf("bindings %v, %v", bs, err)
	}
	turns, err := st.Turns(t.Context(), bs[0].SessionID)
	if err != nil || len(turns) != 1 || turns[0].StopReason != "cancelled" {
		t.Errorf("recorded turns = %+v, %v; want one, cancelled", turns, err)
	}
	raw, err := os.ReadFile(filepath.Join(cfg.DataDir, "events", eventlogName(bs[0].SessionID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"method":"session/cancel"`) || !strings.Contains(string(raw), `"stopReason":"cancelled"`) {
		t.Error("the event log lacks the cancel and its answer")
	}
}

func e2eStore(t *testing.T, dataDir string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(dataDir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func eventlogName(sessionID string) string {
	return filepath.Base(eventlog.PathFor("", sessionID))
}

// With a Discord token the program runs the Discord adapter against
// channels.discord.apiBaseURL: here a server that rejects the token, which
// must stop the program with an error naming Discord, not hang.
func TestRunStartsDiscordWhenConfigured(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message": "401: Unauthorized", "code": 0}`)
	}))
	defer srv.Close()
	t.Setenv("TEST_DISCORD_TOKEN", "bad-token")
	cfg, f := testConfig(t, "channels:\n  discord:\n    token: ${TEST_DISCORD_TOKEN}\n    apiBaseURL: "+srv.URL+"\n")
	if got := cfg.Platforms(); len(got) != 1 || got[0] != "discord" {
		t.Fatalf("platforms = %v, want [discord] (no web chat once a platform is configured)", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := start(ctx, cfg, f, testLogger(t), hooks{})
	if err != nil {
		t.Fatal(err)
	}
	err = g.wait()
	if err == nil || !strings.Contains(err.Error(), "discord") {
		t.Errorf("wait = %v, want an error naming discord", err)
	}
	if hits.Load() == 0 {
		t.Error("the adapter never reached channels.discord.apiBaseURL")
	}
}

// With Slack tokens the program runs the Slack adapter against
// channels.slack.apiURL; a rejected token stops the start with an error
// naming Slack.
func TestRunStartsSlackWhenConfigured(t *testing.T) {
	var paths []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": false, "error": "invalid_auth"}`)
	}))
	defer srv.Close()
	t.Setenv("TEST_SLACK_APP", "xapp-1-test")
	t.Setenv("TEST_SLACK_BOT", "xoxb-test")
	cfg, f := testConfig(t, "channels:\n  slack:\n    appToken: ${TEST_SLACK_APP}\n    botToken: ${TEST_SLACK_BOT}\n    apiURL: "+srv.URL+"/api/\n")
	if got := cfg.Platforms(); len(got) != 1 || got[0] != "slack" {
		t.Fatalf("platforms = %v, want [slack]", got)
	}
	_, err := start(t.Context(), cfg, f, testLogger(t), hooks{})
	if err == nil || !strings.Contains(err.Error(), "channels.slack") || !strings.Contains(err.Error(), "invalid_auth") {
		t.Errorf("start = %v, want the Slack error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 || paths[0] != "/api/auth.test" {
		t.Errorf("requests = %v, want auth.test at channels.slack.apiURL", paths)
	}
}

// After a restart the web chat still shows its threads, and writing in one
// resumes its agent session (session/resume) instead of starting over.
func TestRestartKeepsWebThreadsAndResumes(t *testing.T) {
	cfg, f := testConfig(t, "")
	run1 := func() string {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		g, err := start(ctx, cfg, f, testLogger(t), hooks{})
		if err != nil {
			t.Fatal(err)
		}
		c := webClient(t, g)
		th := c.post("api/threads", map[string]any{})["id"].(string)
		c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo before the restart"})
		c.waitMessage(th, "the first answer", func(m webMessage) bool { return m.Text == "before the restart" })
		cancel()
		if err := g.wait(); err != nil {
			t.Fatal(err)
		}
		return th
	}
	th := run1()

	g := startGateway(t, cfg, f, hooks{})
	c := webClient(t, g)
	resp, err := c.get("api/threads/" + th + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Messages []webMessage }
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if len(got.Messages) < 2 || got.Messages[1].Text != "before the restart" {
		t.Fatalf("thread after the restart = %+v, want its messages back", got.Messages)
	}
	c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo after the restart"})
	c.waitMessage(th, "the answer after the restart", func(m webMessage) bool { return m.Text == "after the restart" })
	st := e2eStore(t, cfg.DataDir)
	bs, _ := st.Bindings(t.Context())
	if len(bs) != 1 {
		t.Fatalf("bindings = %+v, want the one thread", bs)
	}
	raw, err := os.ReadFile(filepath.Join(cfg.DataDir, "events", eventlogName(bs[0].SessionID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"method":"session/resume"`) {
		t.Error("the session was not resumed with session/resume")
	}
}

// Two gateways on one data directory would both answer in every thread:
// the second is refused with an error naming the directory and the first
// one's pid, and may start once the first has stopped.
func TestOneGatewayPerDataDir(t *testing.T) {
	cfg, f := testConfig(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	log := testLogger(t)
	first, err := start(ctx, cfg, f, log, hooks{})
	if err != nil {
		cancel()
		t.Fatalf("first start: %v", err)
	}
	_, err = start(t.Context(), cfg, f, log, hooks{})
	want := fmt.Sprintf("dataDir: %s is in use by another gateway (pid %d)", cfg.DataDir, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second start = %v, want an error containing %q", err, want)
	}
	cancel()
	if err := first.wait(); err != nil {
		t.Fatalf("first gateway stopped with %v", err)
	}
	startGateway(t, cfg, f, hooks{}) // the directory is free again
}

// checked is an adapter that reports a connection state.
type checked struct {
	channels.Adapter
	err error
}

func (c checked) Check() error { return c.err }

// /readyz answers 503 while a channel is not connected, naming it and
// why; channels that cannot tell count as ready.
func TestReadyz(t *testing.T) {
	for _, tc := range []struct {
		name     string
		adapters map[string]channels.Adapter
		status   int
		body     string
	}{
		{"all connected", map[string]channels.Adapter{"discord": checked{}, "web": checked{}}, 200, "discord: ok\nweb: ok\n"},
		{"one down", map[string]channels.Adapter{
			"slack":   checked{err: errors.New("connecting to Socket Mode")},
			"discord": checked{},
			"web":     channeltest.New(channeltest.Options{}).Adapter(),
		}, 503, "discord: ok\nslack: connecting to Socket Mode\nweb: ok\n"},
	} {
		w := httptest.NewRecorder()
		ready(w, tc.adapters, "")
		if w.Code != tc.status || w.Body.String() != tc.body {
			t.Errorf("%s: /readyz = %d %q, want %d %q", tc.name, w.Code, w.Body.String(), tc.status, tc.body)
		}
	}
}

// A reload that adds an agent and makes it the default applies to the
// threads that start afterwards; a running thread keeps its agent.
func TestReloadAppliesAgents(t *testing.T) {
	cfg, f := testConfig(t, "busy: queue\n")
	reloaded := make(chan struct{}, 4)
	g := startGateway(t, cfg, f, hooks{reloaded: reloaded})
	c := webClient(t, g)
	agentOf := func(th string) string {
		t.Helper()
		b, ok := webBinding(t, g, th)
		if !ok {
			t.Fatalf("%s has no binding", th)
		}
		return b.Agent
	}
	chat := func(th, text, answer string) {
		t.Helper()
		c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": text})
		c.waitMessage(th, answer, func(m webMessage) bool { return m.Role == "assistant" && m.Text == answer })
	}
	before := c.post("api/threads", map[string]any{})["id"].(string)
	chat(before, "echo one", "one")

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf("agents:\n  default: second\n  list:\n    second:\n      command: [%q, demo-agent, --state-dir, %q]\n",
		exe, filepath.Join(t.TempDir(), "second"))
	if err := os.WriteFile(f.config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloaded:
	case <-time.After(20 * time.Second):
		t.Fatal("the configuration change was not applied")
	}
	after := c.post("api/threads", map[string]any{})["id"].(string)
	chat(after, "echo two", "two")
	chat(before, "echo three", "three")
	if got := agentOf(after); got != "second" {
		t.Errorf("a thread started after the reload runs %q, want second", got)
	}
	if got := agentOf(before); got != "demo" {
		t.Errorf("the earlier thread now runs %q, want it to keep demo", got)
	}
}
