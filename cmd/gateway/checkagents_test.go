package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/config"
)

// The commands check recognises as codex-acp and Gemini CLI, and those it
// does not.
func TestAgentKind(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want agentKindT
	}{
		{[]string{"npx", "-y", "@zed-industries/codex-acp"}, kindCodex},
		{[]string{"npx", "@agentclientprotocol/codex-acp@2.6.0"}, kindCodex},
		{[]string{"node", "/x/node_modules/@agentclientprotocol/codex-acp/dist/index.js"}, kindCodex},
		{[]string{"/usr/local/bin/codex-acp"}, kindCodex},
		{[]string{"gemini", "--experimental-acp"}, kindGemini},
		{[]string{"npx", "@google/gemini-cli@0.61.0", "--acp"}, kindGemini},
		{[]string{"node", "/x/node_modules/@google/gemini-cli/bundle/gemini.js"}, kindGemini},
		{[]string{"npx", "-y", "@zed-industries/claude-agent-acp"}, kindOther},
		{[]string{"codex"}, kindOther},
		{[]string{"opencode", "acp"}, kindOther},
	} {
		if got := agentKind(c.cmd); got != c.want {
			t.Errorf("agentKind(%q) = %d, want %d", c.cmd, got, c.want)
		}
	}
}

// Gemini CLI's folder trust as check reads it from the agent's home: the
// longest rule of trustedFolders.json that covers the directory wins
// (TRUST_PARENT covers the rule's parent), and folder trust turned off in
// settings.json trusts everything.
func TestGeminiTrusts(t *testing.T) {
	write := func(home, rel, data string) {
		t.Helper()
		p := filepath.Join(home, ".gemini", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	if _, ok := geminiTrusts(home, nil, "/srv/app"); ok {
		t.Error("trusted with no trustedFolders.json")
	}
	write(home, "trustedFolders.json", `{"/srv/app": "TRUST_FOLDER", "/srv/app/secret": "DO_NOT_TRUST", "/work/repo": "TRUST_PARENT"}`)
	for dir, want := range map[string]bool{
		"/srv/app": true, "/srv/app/sub": true, "/srv/apple": false, "/srv/app/secret": false,
		"/work/other": true, "/elsewhere": false,
	} {
		if _, got := geminiTrusts(home, nil, dir); got != want {
			t.Errorf("geminiTrusts(%s) = %v, want %v", dir, got, want)
		}
	}
	if _, ok := geminiTrusts(home, []string{"GEMINI_CLI_TRUST_WORKSPACE=false"}, "/srv/app"); ok {
		t.Error("trusted although GEMINI_CLI_TRUST_WORKSPACE=false")
	}
	other := filepath.Join(t.TempDir(), "trust.json")
	if err := os.WriteFile(other, []byte(`{"/elsewhere": "TRUST_FOLDER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if file, ok := geminiTrusts(home, []string{"GEMINI_CLI_TRUSTED_FOLDERS_PATH=" + other}, "/elsewhere"); !ok || file != other {
		t.Errorf("GEMINI_CLI_TRUSTED_FOLDERS_PATH: %s, %v; want %s trusted", file, ok, other)
	}
	write(home, "settings.json", `{"security": {"folderTrust": {"enabled": false}}}`)
	if _, ok := geminiTrusts(home, nil, "/elsewhere"); !ok {
		t.Error("not trusted with folder trust turned off")
	}
}

// A Gemini CLI whose unsandboxed home trusts its directory gets no
// warning; one whose home does not gets one naming the file to write.
func TestWarnGeminiHome(t *testing.T) {
	probe := sandboxProbe
	t.Cleanup(func() { sandboxProbe = probe })
	sandboxProbe = func() (string, error) { return "/usr/bin/bwrap", nil }
	home, cwd := t.TempDir(), t.TempDir()
	cfg := config.Config{DataDir: t.TempDir()}
	cfg.Agents.Sandbox = "off"
	cfg.Agents.List = map[string]config.AgentSpec{"g": {Command: []string{"gemini", "--acp"}, Cwd: cwd, Env: map[string]string{"HOME": home}}}
	var b strings.Builder
	warnAgents(cfg, &b)
	if want := filepath.Join(home, ".gemini", "trustedFolders.json"); !strings.Contains(b.String(), want) || !strings.Contains(b.String(), cwd) {
		t.Fatalf("warning %q, want one naming %s and %s", b.String(), want, cwd)
	}
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(`{"`+cwd+`": "TRUST_FOLDER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	warnAgents(cfg, &b)
	if b.String() != "" {
		t.Errorf("warning %q for a trusted directory", b.String())
	}
}
