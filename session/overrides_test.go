package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/session"
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
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadOptions{Path: p, Environ: []string{"HOME=" + t.TempDir()}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	rule := session.AccessRule{Guilds: []string{"g-quiet", "g-other"}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Platform: "discord", Edit: true}, access: map[string]session.AccessRule{"discord": rule}})
	e.r.SetPolicy(func(th channels.ThreadRef, space string) session.Policy {
		return cfg.Policy(config.Scope{Platform: th.Platform, Space: space, Channel: th.Channel})
	})
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
