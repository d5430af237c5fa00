package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// Per-guild and per-channel overrides reach the threads they name: the
// router resolves each thread's settings from its platform, space (guild
// or workspace) and channel.
func TestOverridesPerGuildAndChannel(t *testing.T) {
	yaml := `
overrides:
  discord:
    guilds:
      g-quiet: {acp: {stream: {metaMode: "off"}}}
    channels:
      c-loud: {acp: {stream: {metaMode: minimal}}}
`
	cfg := loadConfig(t, yaml)
	rule := session.AccessRule{Guilds: []string{"g-quiet", "g-other"}}
	access := map[string]session.AccessRule{"discord": rule}
	e := newEnv(t, envOptions{rec: channeltest.Options{Platform: "discord", Edit: true}, access: access})
	e.r.Configure(session.Settings{Policy: policyOf(cfg), Access: access})
	for _, tc := range []struct {
		name, guild, channel string
		wantTools            bool
	}{
		{"guild override: no tool lines", "g-quiet", "c-any", false},
		{"channel override beats its guild", "g-quiet", "c-loud", true},
		{"another guild: defaults", "g-other", "c-any", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := channels.ThreadRef{Platform: "discord", Channel: tc.channel, Thread: tc.name}
			if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Space: tc.guild, Author: ann, Text: "tools"}); err != nil {
				t.Fatal(err)
			}
			e.waitEnd(th)
			if got := len(e.messages(th, channels.KindTool)) > 0; got != tc.wantTools {
				t.Errorf("tool lines shown = %v, want %v", got, tc.wantTools)
			}
		})
	}
}

// overrides.*.agent picks the agent of new threads per place; a thread
// keeps the agent it was bound to when the setting changes.
func TestAgentPerChannel(t *testing.T) {
	exe, _ := os.Executable()
	dir := t.TempDir()
	backend := filepath.Join(dir, "backend")
	if err := os.Mkdir(backend, 0o700); err != nil {
		t.Fatal(err)
	}
	load := func(channelAgent string) config.Config {
		yaml := fmt.Sprintf(`
agents:
  default: front
  list:
    front:
      command: [%[1]q, "-test.run=^$", --state-dir, %[2]q]
      env: {SESSION_TEST_DEMO_AGENT: "1", GORACE: atexit_sleep_ms=0}
    back:
      command: [%[1]q, "-test.run=^$", --state-dir, %[2]q]
      env: {SESSION_TEST_DEMO_AGENT: "1", GORACE: atexit_sleep_ms=0}
      cwd: %[3]q
overrides:
  slack:
    channels:
      C-back: {agent: %[4]s}
`, exe, filepath.Join(dir, "demo-state"), backend, channelAgent)
		return loadConfig(t, yaml)
	}
	cfg := load("back")
	e := newEnv(t, envOptions{rec: channeltest.Options{Platform: "slack", Edit: true}, agents: cfg.AgentSpec})
	e.r.Configure(session.Settings{Policy: policyOf(cfg)})
	n := 0
	run := func(th channels.ThreadRef) store.Binding {
		t.Helper()
		n++
		if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Text: "echo hi", ID: channels.MessageID(fmt.Sprint("m", n))}); err != nil {
			t.Fatal(err)
		}
		if end := e.waitEnd(th); end.StopReason != "end_turn" {
			t.Fatalf("turn in %v ended with %+v", th, end)
		}
		b, ok, err := e.st.Binding(e.ctx(), th)
		if err != nil || !ok {
			t.Fatalf("binding of %v: %+v, %v, %v", th, b, ok, err)
		}
		return b
	}
	back := channels.ThreadRef{Platform: "slack", Channel: "C-back", Thread: "1.1"}
	front := channels.ThreadRef{Platform: "slack", Channel: "C-front", Thread: "2.2"}
	if b := run(back); b.Agent != "back" || b.Cwd != backend {
		t.Errorf("thread in C-back bound to agent %q in %q, want back in %q", b.Agent, b.Cwd, backend)
	}
	if b := run(front); b.Agent != "front" {
		t.Errorf("thread in C-front bound to agent %q, want the default (front)", b.Agent)
	}
	// The channel switches to the default agent: its existing thread
	// keeps "back", a new one starts "front".
	e.r.Configure(session.Settings{Policy: policyOf(load("front"))})
	if b := run(back); b.Agent != "back" {
		t.Errorf("existing thread now bound to %q, want it to keep back", b.Agent)
	}
	if b := run(channels.ThreadRef{Platform: "slack", Channel: "C-back", Thread: "3.3"}); b.Agent != "front" {
		t.Errorf("new thread in C-back bound to %q after the change, want front", b.Agent)
	}
}

// loadConfig loads a configuration from yaml, as the program would.
func loadConfig(t *testing.T, yaml string) config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadOptions{Path: p, Environ: []string{"HOME=" + t.TempDir()}, Platforms: []config.Platform{
		{Name: web.Platform, Defaults: web.DefaultConfig()},
		{Name: discord.Platform, Defaults: discord.DefaultConfig()},
		{Name: slack.Platform, Defaults: slack.DefaultConfig()},
	}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// policyOf is the router's policy from cfg, as the program sets it.
func policyOf(cfg config.Config) func(channels.ThreadRef, string) session.Policy {
	return func(th channels.ThreadRef, space string) session.Policy {
		return cfg.Policy(config.Scope{Platform: th.Platform, Space: space, Channel: th.Channel})
	}
}
