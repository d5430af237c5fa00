// Package agenttest runs the real Gemini CLI, Codex (codex-acp), opencode
// and Qwen Code in tests, sandboxed, against the fake model APIs of
// package fakemodel: where the pinned npm packages are, what each is given
// to run offline (environment, configuration files in its home), and the
// agent.Spec that runs one in a sandbox whose network reaches the fake
// only.
//
// A test of an agent runs when its npm package is installed. When it is
// not, the test skips and prints the npm command, unless CI is set or
// EnableVar is 1 (as .ci/run sets after installing them): then it fails.
package agenttest

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/claudetest"
	"github.com/acpgw/gateway/internal/sandboxtest"
	"github.com/acpgw/gateway/sandbox"
)

// EnableVar, set to 1, makes a missing agent package a failure.
const EnableVar = "GATEWAY_TEST_AGENTS"

// Model is the model name the agents are configured with.
const Model = "fake-model"

// Model2 is a second model opencode and Qwen Code are configured with
// (same fake), for a test of switching models.
const Model2 = "fake-model-2"

// Agent is one pinned agent: the npm project that pins it (relative to
// the repository root), its package, and the program and arguments that
// run it over ACP (the program relative to the package's directory).
type Agent struct {
	Name, Dir, Package string
	// Node is true when Program is a script node runs.
	Node    bool
	Program string
	Args    []string
	// setup writes the agent's configuration in home for an agent working
	// in cwd against the fake at base and returns its environment.
	setup func(t testing.TB, home, cwd, base string) []string
}

var (
	// Gemini is Gemini CLI, against the fake Gemini REST API
	// (GOOGLE_GEMINI_BASE_URL selects the "gateway" auth type).
	Gemini = Agent{Name: "gemini", Dir: "agent/testdata/gemini", Package: "@google/gemini-cli",
		Node: true, Program: "bundle/gemini.js", Args: []string{"--experimental-acp"}, setup: geminiSetup}
	// Codex is the ACP adapter of Codex, against the fake Responses API
	// (a custom model provider in config.toml).
	Codex = Agent{Name: "codex", Dir: "agent/testdata/codex", Package: "@agentclientprotocol/codex-acp",
		Node: true, Program: "dist/index.js", setup: codexSetup}
	// Opencode is opencode, against the fake Chat Completions API (an
	// openai-compatible provider in opencode.json).
	Opencode = Agent{Name: "opencode", Dir: "agent/testdata/opencode", Package: "opencode-ai",
		Program: "bin/opencode.exe", Args: []string{"acp"}, setup: opencodeSetup}
	// Qwen is Qwen Code, against the fake Chat Completions API.
	Qwen = Agent{Name: "qwen", Dir: "agent/testdata/qwen", Package: "@qwen-code/qwen-code",
		Node: true, Program: "cli-entry.js", Args: []string{"--acp"}, setup: qwenSetup}
)

// All are the agents, in the order the tests run them.
var All = []Agent{Gemini, Codex, Opencode, Qwen}

// Install is the command, run from the repository root, that installs a.
func (a Agent) Install() string {
	return "npm ci --prefix " + a.Dir + " --no-audit --no-fund"
}

// Command returns the command that runs a, skipping the test when a is not
// installed (failing it when CI is set or EnableVar is 1).
func (a Agent) Command(t testing.TB) []string {
	t.Helper()
	root, err := claudetest.RepoRoot()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	prog := filepath.Join(root, filepath.FromSlash(a.Dir), "node_modules", filepath.FromSlash(a.Package), filepath.FromSlash(a.Program))
	if _, err := os.Stat(prog); err != nil {
		missing(t, "%s (%s) is not installed (%v); from the repository root run: %s", a.Name, a.Package, err, a.Install())
	}
	cmd := []string{prog}
	if a.Node {
		node, err := exec.LookPath("node")
		if err != nil {
			missing(t, "node is not on PATH (%v); %s needs it", err, a.Name)
		}
		cmd = []string{node, prog}
	}
	return append(cmd, a.Args...)
}

// missing skips the test, or fails it where the agents must run.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" || os.Getenv(EnableVar) == "1" {
		t.Fatalf("CI or "+EnableVar+"=1 is set and "+format, args...)
	}
	t.Skipf(format, args...)
}

// Spec returns the spec that runs a in cwd against the fake model server
// at base (its URL, no path), in a sandbox: its home a temporary
// directory holding its configuration, its network only the fake's
// address (the sandbox's forwarder makes the address the same inside).
func (a Agent) Spec(t testing.TB, base, cwd string) agent.Spec {
	t.Helper()
	command := a.Command(t)
	sandboxtest.Require(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append([]string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"NO_COLOR=1",
	}, a.setup(t, home, cwd, base)...)
	exe, _ := os.Executable()
	return agent.Spec{
		Name:    a.Name,
		Command: command,
		Dir:     cwd,
		Env:     env,
		Sandbox: &sandbox.Spec{Home: home, Exe: exe, Workspace: cwd,
			Network: sandbox.Network{Mode: sandbox.NetAllow, Allow: []string{u.Host}}},
	}
}

// writeFile writes data (a string, or a value as JSON) to home/rel.
func writeFile(t testing.TB, home, rel string, data any) {
	t.Helper()
	b, ok := data.(string)
	if !ok {
		j, err := json.MarshalIndent(data, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b = string(j)
	}
	p := filepath.Join(home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func geminiSetup(t testing.TB, home, cwd, base string) []string {
	writeFile(t, home, ".gemini/settings.json", map[string]any{
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	})
	// An untrusted folder drops the client's MCP servers and refuses the
	// yolo and autoEdit modes.
	writeFile(t, home, ".gemini/trustedFolders.json", map[string]string{cwd: "TRUST_FOLDER"})
	return []string{"GOOGLE_GEMINI_BASE_URL=" + base, "GEMINI_API_KEY=dummy-key"}
}

func codexSetup(t testing.TB, home, cwd, base string) []string {
	writeFile(t, home, ".codex/config.toml", strings.Join([]string{
		`model = "gpt-5.5"`,
		`model_provider = "fake"`,
		`check_for_update_on_startup = false`,
		`[model_providers.fake]`,
		`name = "Fake"`,
		`base_url = "` + base + `/v1"`,
		`env_key = "FAKE_API_KEY"`,
		`wire_api = "responses"`,
		`[analytics]`,
		`enabled = false`,
		`[projects."` + cwd + `"]`,
		`trust_level = "trusted"`,
		``,
	}, "\n"))
	return []string{"FAKE_API_KEY=dummy", "CODEX_HOME=" + filepath.Join(home, ".codex"), "NO_BROWSER=1",
		// Every write and every escalated command asks the client (the
		// adapter's default mode has a model review them instead).
		"INITIAL_AGENT_MODE=read-only"}
}

func opencodeSetup(t testing.TB, home, cwd, base string) []string {
	writeFile(t, home, ".config/opencode/opencode.json", map[string]any{
		"autoupdate": false, "share": "disabled", "model": "fake/" + Model,
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": base + "/v1", "apiKey": "dummy"},
			"models": map[string]any{
				Model: map[string]any{"name": "Fake Model", "tool_call": true,
					"limit": map[string]any{"context": 128000, "output": 8192}},
				Model2: map[string]any{"name": "Fake Model 2", "tool_call": true,
					"limit": map[string]any{"context": 128000, "output": 8192}},
			},
		}},
		// Without it opencode never asks.
		"permission": map[string]any{"edit": "ask", "bash": "ask"},
	})
	return []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1"}
}

func qwenSetup(t testing.TB, home, cwd, base string) []string {
	writeFile(t, home, ".qwen/settings.json", map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		"model":    map[string]any{"name": Model},
		"tools":    map[string]any{"approvalMode": "default"},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"disableAutoUpdate": true},
		// The models /model offers (one without it).
		"modelProviders": map[string]any{"openai": []any{
			map[string]any{"id": Model, "name": "Fake Model", "baseUrl": base + "/v1", "envKey": "OPENAI_API_KEY"},
			map[string]any{"id": Model2, "name": "Fake Model 2", "baseUrl": base + "/v1", "envKey": "OPENAI_API_KEY"},
		}},
	})
	return []string{"OPENAI_API_KEY=dummy", "OPENAI_BASE_URL=" + base + "/v1", "OPENAI_MODEL=" + Model}
}
