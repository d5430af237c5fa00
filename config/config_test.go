package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/workspace"
	"github.com/google/go-cmp/cmp"
)

// testPlatforms are the platforms tests load with: cmd/gateway's.
var testPlatforms = []Platform{
	{Name: web.Platform, Defaults: web.DefaultConfig()},
	{Name: discord.Platform, Defaults: discord.DefaultConfig()},
	{Name: slack.Platform, Defaults: slack.DefaultConfig()},
}

// testEnv is the environment tests load with unless they say otherwise.
var testEnv = []string{"HOME=/home/u"}

func writeYAML(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// load loads yaml (none if "") with env added to testEnv and sets.
func load(t *testing.T, yaml string, env []string, sets ...string) (Config, error) {
	t.Helper()
	o := LoadOptions{Platforms: testPlatforms, Sets: sets, Environ: append(append([]string{}, testEnv...), env...)}
	if yaml != "" {
		o.Path = writeYAML(t, yaml)
	}
	return o.Load()
}

func mustLoad(t *testing.T, yaml string, env []string, sets ...string) Config {
	t.Helper()
	c, err := load(t, yaml, env, sets...)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := mustLoad(t, "", nil)
	tests := []struct {
		name      string
		got, want any
	}{
		{"dataDir", c.DataDir, "/home/u/.local/state/acp-gateway"},
		{"eventLog.dir", c.EventLog.Dir, "/home/u/.local/state/acp-gateway/events"},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, "text"},
		{"acp.stream.metaMode", c.ACP.Stream.MetaMode, "minimal"},
		{"acp.stream.maxTurnChars", c.ACP.Stream.MaxTurnChars, 24000},
		{"typing.mode", c.Typing.Mode, "instant"},
		{"abort.enabled", c.Abort.Enabled, true},
		{"permissions.policy", c.Permissions.Policy, "ask"},
		{"permissions.timeout", c.Permissions.Timeout, 10 * time.Minute},
		{"busy", c.Busy, "queue"},
		{"agents.default", c.Agents.Default, "demo"},
		{"agents.idleTimeout", c.Agents.IdleTimeout, 30 * time.Minute},
		{"threads.evictAfter", c.Threads.EvictAfter, 10 * time.Minute},
		{"agents.maxProcesses", c.Agents.MaxProcesses, 8},
		{"agents.stopGrace", c.Agents.StopGrace, 3 * time.Second},
		{"eventLog.maxSegments", c.EventLog.MaxSegments, 5},
		{"channels.web.enabled", SectionOf[web.Config](c, web.Platform).Enabled, (*bool)(nil)},
		{"channels.web.listen", SectionOf[web.Config](c, web.Platform).Listen, "127.0.0.1:8484"},
		{"channels.discord.apiBaseURL", SectionOf[discord.Config](c, discord.Platform).APIBaseURL, "https://discord.com"},
		{"channels.slack.apiURL", SectionOf[slack.Config](c, slack.Platform).APIURL, "https://slack.com/api/"},
		{"channels.catchUp", c.Channels.CatchUp, 24 * time.Hour},
		{"metrics.listen", c.Metrics.Listen, "127.0.0.1:9464"},
		{"platforms", c.Platforms(), []string{"web"}},
		{"file", c.File(), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if err := Validate(Default(testPlatforms...)); err != nil {
		t.Errorf("Validate(Default(testPlatforms...)) = %v", err)
	}
}

func TestDataDir(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		yaml string
		want string
	}{
		{"xdg", []string{"HOME=/home/u", "XDG_STATE_HOME=/xdg"}, "", "/xdg/acp-gateway"},
		{"relative xdg ignored", []string{"HOME=/home/u", "XDG_STATE_HOME=rel"}, "", "/home/u/.local/state/acp-gateway"},
		{"home", []string{"HOME=/home/u"}, "", "/home/u/.local/state/acp-gateway"},
		{"no home", []string{"HOME="}, "", ".acp-gateway"},
		{"tilde", []string{"HOME=/home/u"}, "dataDir: ~/gw\n", "/home/u/gw"},
		{"explicit", []string{"HOME=/home/u"}, "dataDir: /srv/gw\n", "/srv/gw"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := LoadOptions{Platforms: testPlatforms, Environ: tc.env}
			if tc.yaml != "" {
				o.Path = writeYAML(t, tc.yaml)
			}
			c, err := o.Load()
			if err != nil {
				t.Fatal(err)
			}
			if c.DataDir != tc.want {
				t.Errorf("dataDir = %q, want %q", c.DataDir, tc.want)
			}
			if got, want := c.EventLog.Dir, filepath.Join(tc.want, "events"); got != want {
				t.Errorf("eventLog.dir = %q, want %q", got, want)
			}
		})
	}
}

func TestDefaultFileInWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DefaultFile), []byte("busy: interrupt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	c, err := LoadOptions{Platforms: testPlatforms, Environ: testEnv}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.Busy != "interrupt" || c.File() != DefaultFile {
		t.Errorf("busy = %q, file = %q; want interrupt from %s", c.Busy, c.File(), DefaultFile)
	}
}

func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := LoadOptions{Platforms: testPlatforms, Path: path, Environ: testEnv}.Load()
	if want := fmt.Sprintf("config file %q not found", path); err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v does not match fs.ErrNotExist", err)
	}
}

func TestLoadFileAndSet(t *testing.T) {
	c := mustLoad(t, `
acp:
  stream:
    metaMode: verbose
    maxTurnChars: 500
    tagVisibility:
      plan: true
typing:
  mode: message
  ttl: 2m
agents:
  default: claude
  list:
    claude:
      command: [npx, "@zed-industries/claude-agent-acp"]
      cwd: /src
access:
  discord:
    guilds: [123456789012345678, "42"]
`, nil, "acp.stream.showUsage=true", "acp.stream.maxTurnChars=900")
	s := c.ACP.Stream
	if s.MetaMode != projector.MetaVerbose || !s.ShowUsage || s.MaxTurnChars != 900 || !s.TagVisibility["plan"] {
		t.Errorf("stream = %+v", s)
	}
	if s.MaxStatusChars != 320 {
		t.Errorf("an unset key lost its default: maxStatusChars = %d", s.MaxStatusChars)
	}
	if c.Typing.Mode != "message" || c.Typing.TTL != 2*time.Minute {
		t.Errorf("typing = %+v", c.Typing)
	}
	if diff := cmp.Diff([]string{"123456789012345678", "42"}, c.Access["discord"].Guilds); diff != "" {
		t.Errorf("numeric ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(AgentSpec{Command: []string{"npx", "@zed-industries/claude-agent-acp"}, Cwd: "/src", Workspace: "shared", MCP: new(true), Network: "full"}, c.Agents.List["claude"]); diff != "" {
		t.Errorf("agent (-want +got):\n%s", diff)
	}
}

func TestEnvironment(t *testing.T) {
	tests := []struct {
		name string
		env  string
		get  func(Config) any
		want any
	}{
		{"string", "GATEWAY_ACP__STREAM__METAMODE=verbose", func(c Config) any { return c.ACP.Stream.MetaMode }, "verbose"},
		{"any case", "GATEWAY_acp__Stream__metamode=off", func(c Config) any { return c.ACP.Stream.MetaMode }, "off"},
		{"int", "GATEWAY_ACP__STREAM__MAXTURNCHARS=1234", func(c Config) any { return c.ACP.Stream.MaxTurnChars }, 1234},
		{"int64", "GATEWAY_EVENTLOG__MAXSEGMENTBYTES=2097152", func(c Config) any { return c.EventLog.MaxSegmentBytes }, int64(2097152)},
		{"bool", "GATEWAY_ACP__STREAM__SHOWUSAGE=true", func(c Config) any { return c.ACP.Stream.ShowUsage }, true},
		{"bool false", "GATEWAY_ABORT__ENABLED=false", func(c Config) any { return c.Abort.Enabled }, false},
		{"duration", "GATEWAY_TYPING__TTL=1m30s", func(c Config) any { return c.Typing.TTL }, 90 * time.Second},
		{"zero duration", "GATEWAY_AGENTS__IDLETIMEOUT=0", func(c Config) any { return c.Agents.IdleTimeout }, time.Duration(0)},
		{"list", "GATEWAY_ABORT__ADD=enough, hold on", func(c Config) any { return c.Abort.Add }, []string{"enough", "hold on"}},
		{"pointer bool", "GATEWAY_CHANNELS__WEB__ENABLED=true", func(c Config) any { return *SectionOf[web.Config](c, web.Platform).Enabled }, true},
		{"map of bool, tag lower-cased", "GATEWAY_ACP__STREAM__TAGVISIBILITY__PLAN=true", func(c Config) any { return c.ACP.Stream.TagVisibility }, map[string]bool{"plan": true}},
		{"access platform lower-cased", "GATEWAY_ACCESS__DISCORD__USERS=1,2", func(c Config) any { return c.Access["discord"].Users }, []string{"1", "2"}},
		{"agent name keeps case", "GATEWAY_AGENTS__LIST__Claude__COMMAND=npx,@zed-industries/claude-agent-acp",
			func(c Config) any { return c.Agents.List["Claude"].Command }, []string{"npx", "@zed-industries/claude-agent-acp"}},
		{"env var name keeps case", "GATEWAY_AGENTS__LIST__x__ENV__OPENAI_API_KEY=k",
			func(c Config) any { return c.Agents.List["x"].Env }, map[string]string{"OPENAI_API_KEY": "k"}},
		{"override", "GATEWAY_OVERRIDES__SLACK__CHANNELS__C01__ACP__STREAM__METAMODE=off",
			func(c Config) any { return c.Policy(Scope{Platform: "slack", Channel: "C01"}).Stream.MetaMode }, "off"},
		{"test variables ignored", "GATEWAY_TEST_ANYTHING=1", func(c Config) any { return c.Busy }, "queue"},
		{"other prefixes ignored", "GATEWAYX=1", func(c Config) any { return c.Busy }, "queue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{tc.env}
			if strings.Contains(tc.env, "AGENTS__LIST__x__") {
				env = append(env, "GATEWAY_AGENTS__LIST__x__COMMAND=x")
			}
			c := mustLoad(t, "", env)
			if diff := cmp.Diff(tc.want, tc.get(c)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetConversions(t *testing.T) {
	c := mustLoad(t, "", nil,
		"agents.maxProcesses=3",
		"agents.stopGrace=250ms",
		"channels.discord.dms=true",
		"abort.remove=exit,para",
		"permissions.timeout=1h",
	)
	if c.Agents.MaxProcesses != 3 || c.Agents.StopGrace != 250*time.Millisecond || !SectionOf[discord.Config](c, discord.Platform).DMs ||
		!cmp.Equal(c.Abort.Remove, []string{"exit", "para"}) || c.Permissions.Timeout != time.Hour {
		t.Errorf("got %+v %+v %+v %+v", c.Agents, SectionOf[discord.Config](c, discord.Platform), c.Abort, c.Permissions)
	}
}

func TestPrecedence(t *testing.T) {
	const file = "busy: interrupt\ntyping: {mode: message}\nacp: {stream: {metaMode: verbose}}\n"
	env := []string{"GATEWAY_TYPING__MODE=never", "GATEWAY_ACP__STREAM__METAMODE=off"}
	c := mustLoad(t, file, env, "acp.stream.metaMode=minimal")
	tests := []struct {
		key, got, want, source string
	}{
		{"permissions.policy", c.Permissions.Policy, "ask", "default"},
		{"busy", c.Busy, "interrupt", "file"},
		{"typing.mode", c.Typing.Mode, "never", "env GATEWAY_TYPING__MODE"},
		{"acp.stream.metaMode", c.ACP.Stream.MetaMode, "minimal", "--set"},
	}
	explained := Explain(c, Scope{})
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%s = %q, want %q", tc.key, tc.got, tc.want)
			}
			leaf := tc.key[strings.LastIndexByte(tc.key, '.')+1:]
			line := leaf + ": " + tc.want + " # " + tc.source
			if !strings.Contains(explained, line) {
				t.Errorf("Explain lacks %q:\n%s", line, explained)
			}
		})
	}
}

func TestExpansion(t *testing.T) {
	c := mustLoad(t, `
channels:
  discord:
    token: ${DISCORD_TOKEN}
  web:
    token: "pre-${EMPTY}-$${LITERAL}-$HOME"
agents:
  list:
    codex:
      command: [npx, "${PKG}"]
      env:
        OPENAI_API_KEY: ${OPENAI_API_KEY}
`, []string{"DISCORD_TOKEN=d-secret", "EMPTY=", "PKG=@zed-industries/codex-acp", "OPENAI_API_KEY=sk-1"})
	if got := SectionOf[discord.Config](c, discord.Platform).Token; got != "d-secret" {
		t.Errorf("discord token = %q", got)
	}
	if got, want := SectionOf[web.Config](c, web.Platform).Token, "pre--${LITERAL}-$HOME"; got != want {
		t.Errorf("web token = %q, want %q", got, want)
	}
	if got := c.Agents.List["codex"]; got.Command[1] != "@zed-industries/codex-acp" || got.Env["OPENAI_API_KEY"] != "sk-1" {
		t.Errorf("codex = %+v", got)
	}
}

func TestExpand(t *testing.T) {
	env := lookupIn([]string{"A=1", "B=two", "E="})
	tests := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "1"},
		{in: "x${A}y${B}z", want: "x1ytwoz"},
		{in: "${E}", want: ""},
		{in: "$${A}", want: "${A}"},
		{in: "$A ${A}$", want: "$A 1$"},
		{in: "${MISSING}", err: "environment variable MISSING is not set (referenced as ${MISSING})"},
		{in: "${M1}${M2}${M1}", err: "environment variables M1, M2 are not set"},
		{in: "${A", err: "unterminated ${"},
		{in: "${a b}", err: "${a b}: not a variable name"},
		{in: "${}", err: "${}: not a variable name"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := expand(tc.in, env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("expand(%q) err = %v, want %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestAgentSpec(t *testing.T) {
	c := mustLoad(t, `
dataDir: /data
agents:
  default: codex
  list:
    codex:
      command: [npx, "@zed-industries/codex-acp"]
      env: {OPENAI_API_KEY: k, A: b}
      cwd: /src
      authMethod: openai-api-key
`, nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		want   []string // Command
		env    []string
		dir    string
		auth   string
		wantOK bool
	}{
		{name: "", want: []string{"npx", "@zed-industries/codex-acp"}, env: []string{"A=b", "OPENAI_API_KEY=k"}, dir: "/src", auth: "openai-api-key", wantOK: true},
		{name: "codex", want: []string{"npx", "@zed-industries/codex-acp"}, env: []string{"A=b", "OPENAI_API_KEY=k"}, dir: "/src", auth: "openai-api-key", wantOK: true},
		{name: "demo", want: []string{exe, "demo-agent", "--state-dir", "/data/demo-agent"}, wantOK: true},
		{name: "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := c.AgentSpec(tc.name)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, s.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.env, s.Env, cmpEmpty); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if s.Dir != tc.dir || s.AuthMethod != tc.auth {
				t.Errorf("dir, auth = %q, %q; want %q, %q", s.Dir, s.AuthMethod, tc.dir, tc.auth)
			}
		})
	}
}

func TestAgentWorkspace(t *testing.T) {
	c := mustLoad(t, `
agents:
  default: claude
  list:
    claude: {command: [c], cwd: /src, workspace: worktree}
    codex: {command: [x], workspace: dir, workspaceDir: "ws/{thread}"}
    plain: {command: [p], cwd: /p}
workspace:
  keep: 168h
`, nil)
	for _, tc := range []struct {
		name string
		want workspace.Agent
	}{
		{"", workspace.Agent{Mode: workspace.Worktree, Cwd: "/src"}},
		{"codex", workspace.Agent{Mode: workspace.Dir, Template: "ws/{thread}"}},
		{"plain", workspace.Agent{Mode: workspace.Shared, Cwd: "/p"}},
		{"demo", workspace.Agent{Mode: workspace.Dir}},
		{"unlisted", workspace.Agent{Mode: workspace.Shared}},
	} {
		if got := c.AgentWorkspace(tc.name); got != tc.want {
			t.Errorf("AgentWorkspace(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if c.Workspace.Keep != 168*time.Hour {
		t.Errorf("workspace.keep = %v, want 168h", c.Workspace.Keep)
	}
}

// TestAgentEnvironment follows the configuration into the agent's
// environment: the gateway's tokens (from the file, ${VAR} references and
// GATEWAY_ variables) and another agent's key never reach an agent, even
// when its inheritEnv lists them; its own env, what it inherits and the
// base variables do.
func TestAgentEnvironment(t *testing.T) {
	environ := []string{
		"HOME=/home/u", "PATH=/usr/bin", "LANG=C.UTF-8",
		"DISCORD_TOKEN=discord-token-MTIzNDU2Nzg5", "SLACK_BOT_TOKEN=xoxb-bot-token-123456",
		"SLACK_APP_TOKEN=xapp-app-token-123456", "WEB_SECRET=web-token-abcdef0123456789",
		"GATEWAY_CHANNELS__WEB__TOKEN=web-token-abcdef0123456789",
		"ANTHROPIC_API_KEY=sk-ant-claude-key-0123456789", "OPENAI_API_KEY=sk-openai-codex-key-0123456789",
		"SHARED_KEY=shared-key-of-both-0123", "TOKEN_COPY=xoxb-bot-token-123456",
		"NODE_OPTIONS=--max-old-space-size=4096", "npm_config_cache=/var/cache/npm", "UNLISTED=u",
		"ANN_TOKEN=ann-web-token-0123456789abcdef",
	}
	path := writeYAML(t, `
channels:
  discord: {token: "${DISCORD_TOKEN}"}
  slack: {appToken: "${SLACK_APP_TOKEN}", botToken: "${SLACK_BOT_TOKEN}"}
  web: {enabled: true, users: {ann: "${ANN_TOKEN}"}}
agents:
  default: claude
  list:
    claude:
      command: [claude-agent-acp]
      env: {ANTHROPIC_API_KEY: "${ANTHROPIC_API_KEY}", SHARED: "${SHARED_KEY}", DEBUG: "1"}
      inheritEnv: [NODE_OPTIONS, npm_config_*, DISCORD_TOKEN, SLACK_BOT_TOKEN, GATEWAY_CHANNELS__WEB__TOKEN, OPENAI_API_KEY, TOKEN_COPY, ANN_TOKEN]
    codex:
      command: [codex-acp]
      env: {OPENAI_API_KEY: "${OPENAI_API_KEY}", SHARED: "${SHARED_KEY}", DEBUG: "1"}
`)
	c, err := LoadOptions{Platforms: testPlatforms, Path: path, Environ: environ}.Load()
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := c.AgentSpec("claude")
	if !ok {
		t.Fatal("no claude agent")
	}
	env, withheld := spec.Environ(environ)
	want := []string{
		"HOME=/home/u", "PATH=/usr/bin", "LANG=C.UTF-8",
		"NODE_OPTIONS=--max-old-space-size=4096", "npm_config_cache=/var/cache/npm",
		"ANTHROPIC_API_KEY=sk-ant-claude-key-0123456789", "DEBUG=1", "SHARED=shared-key-of-both-0123",
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("claude's environment (-want +got):\n%s", diff)
	}
	var names []string
	for _, w := range withheld {
		names = append(names, w.Name)
	}
	wantWithheld := []string{"DISCORD_TOKEN", "SLACK_BOT_TOKEN", "GATEWAY_CHANNELS__WEB__TOKEN", "OPENAI_API_KEY", "TOKEN_COPY", "ANN_TOKEN"}
	if diff := cmp.Diff(wantWithheld, names); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
	// The web token came from a GATEWAY_ variable; it is a secret too.
	if !slices.Contains(spec.Secrets, "web-token-abcdef0123456789") {
		t.Errorf("the web token is not among claude's secrets")
	}
	// The demo agent gets the base variables only.
	demo, _ := c.AgentSpec("demo")
	env, _ = demo.Environ(environ)
	if diff := cmp.Diff([]string{"HOME=/home/u", "PATH=/usr/bin", "LANG=C.UTF-8"}, env); diff != "" {
		t.Errorf("demo's environment (-want +got):\n%s", diff)
	}
}

func TestCheckDirs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, fmt.Sprintf(`
agents:
  list:
    ok: {command: [x], cwd: %q}
    none: {command: [x]}
    gone: {command: [x], cwd: %q}
    file: {command: [x], cwd: %q}
`, dir, filepath.Join(dir, "gone"), file), nil)
	err := c.CheckDirs()
	if err == nil {
		t.Fatal("no error")
	}
	want := "agents.list.file.cwd: " + file + " is not a directory\n" +
		"agents.list.gone.cwd: the directory " + filepath.Join(dir, "gone") + " does not exist"
	if err.Error() != want {
		t.Errorf("CheckDirs =\n%v\nwant\n%s", err, want)
	}
	if err := mustLoad(t, "", nil).CheckDirs(); err != nil {
		t.Errorf("CheckDirs of the defaults: %v", err)
	}
}

// TestCheckDirsWorktree: an agent with workspace: worktree needs its cwd
// in a git repository with a commit (real git).
func TestCheckDirsWorktree(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	plain, empty, repo := t.TempDir(), t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"-C", empty, "init", "--quiet"},
		{"-C", repo, "init", "--quiet"},
		{"-C", repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", "first"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	c := mustLoad(t, fmt.Sprintf(`
agents:
  list:
    plain: {command: [x], cwd: %q, workspace: worktree}
    empty: {command: [x], cwd: %q, workspace: worktree}
    repo: {command: [x], cwd: %q, workspace: worktree}
    shared: {command: [x], cwd: %q}
`, plain, empty, repo, plain), nil)
	err := c.CheckDirs()
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "agents.list.empty.cwd: the repository "+empty+" has no commit yet") ||
		!strings.HasPrefix(lines[1], "agents.list.plain.cwd: "+plain+" is not a git repository with a commit, which workspace: worktree needs") {
		t.Errorf("CheckDirs =\n%v\nwant the empty and the plain directory named", err)
	}
}

var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestPlatforms(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"nothing: web", "", []string{"web"}},
		{"discord only", "channels: {discord: {token: t}}", []string{"discord"}},
		{"slack only", "channels: {slack: {appToken: xapp-1, botToken: xoxb-1}}", []string{"slack"}},
		{"both", "channels: {discord: {token: t}, slack: {appToken: xapp-1, botToken: xoxb-1}}", []string{"discord", "slack"}},
		{"web forced on", "channels: {discord: {token: t}, web: {enabled: true}}", []string{"discord", "web"}},
		{"web off", "channels: {discord: {token: t}, web: {enabled: false}}", []string{"discord"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, tc.yaml, nil)
			if diff := cmp.Diff(tc.want, c.Platforms()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDocumentedKeys(t *testing.T) {
	got := documentedKeys("a:\n  # b: 1\n  c:\n    #   d: x\n# prose, not a key: here\nz: {}\n")
	want := [][]string{{"a"}, {"a", "b"}, {"a", "c"}, {"a", "c", "d"}, {"z"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSource(t *testing.T) {
	c := mustLoad(t, "channels:\n  web:\n    listen: 127.0.0.1:9000\n", []string{"GATEWAY_METRICS__LISTEN=127.0.0.1:9001"}, "busy=interrupt")
	for _, tc := range []struct{ key, want string }{
		{"channels.web.listen", "file"},
		{"metrics.listen", "env GATEWAY_METRICS__LISTEN"},
		{"busy", "--set"},
		{"dataDir", "default"},
		{"channels.web.token", "default"},
	} {
		if got := c.Source(tc.key); got != tc.want {
			t.Errorf("Source(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
	if got := (Config{}).Source("metrics.listen"); got != "default" {
		t.Errorf("Source of a Config not loaded = %q, want default", got)
	}
}

// TestAgentMCP: agents.list.NAME.mcp defaults to true and false reaches
// the agent's spec as NoMCP; a non-boolean is refused with the key named.
func TestAgentMCP(t *testing.T) {
	c := mustLoad(t, `
agents:
  list:
    a: {command: [a]}
    b: {command: [b], mcp: false}
    c: {command: [c], mcp: true}
`, nil)
	for name, wantNo := range map[string]bool{"a": false, "b": true, "c": false} {
		s, ok := c.AgentSpec(name)
		if !ok || s.NoMCP != wantNo {
			t.Errorf("agent %s: ok=%v NoMCP=%v, want NoMCP=%v", name, ok, s.NoMCP, wantNo)
		}
	}
	if _, err := load(t, "agents:\n  list:\n    a: {command: [a], mcp: sometimes}\n", nil); err == nil || !strings.Contains(err.Error(), "agents.list.a.mcp") {
		t.Errorf("mcp: sometimes: err = %v, want one naming agents.list.a.mcp", err)
	}
}

// TestSharedValuesAreNotSecrets: two agents behind one local model proxy
// share its URL (Gemini's GOOGLE_GEMINI_BASE_URL is inside Qwen's
// OPENAI_BASE_URL): neither is a secret, so each agent gets its own. Keys
// (secret-looking names) and the entries an operator lists in secretEnv
// stay with their agent, whole or inside another value.
func TestSharedValuesAreNotSecrets(t *testing.T) {
	environ := []string{"HOME=/home/u", "PATH=/usr/bin", "GEM_KEY=gemini-key-0123456789abcdef", "GEM_AUTH=Bearer-gemini-0123456789", "GEM_PW=pw-of-gemini", "CA=/etc/ssl/company-ca.pem"}
	path := writeYAML(t, `
agents:
  list:
    gemini:
      command: [gemini, --experimental-acp]
      env:
        GOOGLE_GEMINI_BASE_URL: http://127.0.0.1:18601
        GEMINI_API_KEY: ${GEM_KEY}
        GEMINI_CLI_TRUST_WORKSPACE: "true-and-long"
        AUTH_HEADER: ${GEM_AUTH}
        db_password: ${GEM_PW}
        NODE_EXTRA_CA_CERTS: ${CA}
      secretEnv: [AUTH_*]
    qwen:
      command: [qwen, --acp]
      env:
        OPENAI_BASE_URL: http://127.0.0.1:18601/v1
        OPENAI_API_KEY: dummy-key-of-qwen
        WRAPPED: "Authorization: ${GEM_AUTH}"
        TRUST: "true-and-long"
      inheritEnv: [GEM_KEY, GEM_PW, CA]
`)
	c, err := LoadOptions{Platforms: testPlatforms, Path: path, Environ: environ}.Load()
	if err != nil {
		t.Fatal(err)
	}
	qwen, _ := c.AgentSpec("qwen")
	env, withheld := qwen.Environ(environ)
	want := []string{
		"HOME=/home/u", "PATH=/usr/bin", "CA=/etc/ssl/company-ca.pem",
		"OPENAI_API_KEY=dummy-key-of-qwen",
		"OPENAI_BASE_URL=http://127.0.0.1:18601/v1", "TRUST=true-and-long",
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("qwen's environment (-want +got):\n%s", diff)
	}
	var names []string
	for _, w := range withheld {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"GEM_KEY", "GEM_PW", "WRAPPED"}, names); diff != "" {
		t.Errorf("withheld from qwen (-want +got):\n%s", diff)
	}
	gemini, _ := c.AgentSpec("gemini")
	env, withheld = gemini.Environ(environ)
	if !slices.Contains(env, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:18601") || len(withheld) != 0 {
		t.Errorf("gemini's environment %q, withheld %v", env, withheld)
	}
	// secretEnv is validated like inheritEnv.
	if _, err := (LoadOptions{Platforms: testPlatforms, Environ: environ}).load("x.yaml", []byte("agents: {list: {a: {command: [x], secretEnv: ['1-X']}}}\n")); err == nil || !strings.Contains(err.Error(), "agents.list.a.secretEnv[0]") {
		t.Errorf("a bad secretEnv name: %v", err)
	}
}
