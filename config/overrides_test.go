package config

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/session"
	"github.com/google/go-cmp/cmp"
)

const overridesYAML = `
busy: queue
acp:
  stream:
    metaMode: verbose
    tagVisibility: {plan: true}
overrides:
  discord:
    settings:
      acp: {stream: {metaMode: off, tagVisibility: {usage_update: true}}}
    guilds:
      "1234":
        acp: {stream: {deliveryMode: final_only}}
        typing: {mode: message}
      "9999":
        busy: interrupt
    channels:
      "5678":
        busy: interrupt
        acp: {stream: {metaMode: minimal}}
        permissions: {timeout: 30s}
  slack:
    workspaces:
      T01: {acp: {stream: {liveText: blocks}}}
    channels:
      C01: {acp: {stream: {liveText: draft, showUsage: true}}}
  web:
    settings:
      acp: {stream: {tagVisibility: {plan: false, agent_thought_chunk: true}}}
`

func TestPolicyPrecedence(t *testing.T) {
	c := mustLoad(t, overridesYAML, nil)
	type view struct {
		MetaMode, DeliveryMode, LiveText string
		ShowUsage                        bool
		Tags                             map[string]bool
		TypingMode, Busy                 string
		Timeout                          time.Duration
	}
	see := func(p session.Policy) view {
		return view{p.Stream.MetaMode, p.Stream.DeliveryMode, p.Stream.LiveText, p.Stream.ShowUsage,
			p.Stream.TagVisibility, p.Typing.Mode, p.Busy, p.Permissions.Timeout}
	}
	base := view{"verbose", "live", "draft", false, map[string]bool{"plan": true}, "instant", "queue", 10 * time.Minute}
	with := func(f func(*view)) view {
		v := base
		v.Tags = map[string]bool{"plan": true}
		f(&v)
		return v
	}
	discord := with(func(v *view) { v.MetaMode = "off"; v.Tags["usage_update"] = true })
	tests := []struct {
		name  string
		scope Scope
		want  view
	}{
		{"no platform: base", Scope{}, base},
		{"unknown platform: base", Scope{Platform: "irc"}, base},
		{"discord platform", Scope{Platform: "discord"}, discord},
		{"discord unknown guild and channel", Scope{Platform: "discord", Space: "1", Channel: "2"}, discord},
		{"guild over platform", Scope{Platform: "discord", Space: "1234"}, with(func(v *view) {
			v.MetaMode, v.DeliveryMode, v.TypingMode = "off", "final_only", "message"
			v.Tags["usage_update"] = true
		})},
		{"channel over platform", Scope{Platform: "discord", Channel: "5678"}, with(func(v *view) {
			v.MetaMode, v.Busy, v.Timeout = "minimal", "interrupt", 30*time.Second
			v.Tags["usage_update"] = true
		})},
		{"channel over guild over platform", Scope{Platform: "discord", Space: "1234", Channel: "5678"}, with(func(v *view) {
			v.MetaMode, v.DeliveryMode, v.TypingMode, v.Busy, v.Timeout = "minimal", "final_only", "message", "interrupt", 30*time.Second
			v.Tags["usage_update"] = true
		})},
		{"other guild, same channel", Scope{Platform: "discord", Space: "9999", Channel: "5678"}, with(func(v *view) {
			v.MetaMode, v.Busy, v.Timeout = "minimal", "interrupt", 30*time.Second
			v.Tags["usage_update"] = true
		})},
		{"slack platform has no settings", Scope{Platform: "slack"}, base},
		{"slack workspace", Scope{Platform: "slack", Space: "T01"}, with(func(v *view) { v.LiveText = "blocks" })},
		{"slack channel over workspace", Scope{Platform: "slack", Space: "T01", Channel: "C01"}, with(func(v *view) {
			v.LiveText, v.ShowUsage = "draft", true
		})},
		{"discord ids do not apply to slack", Scope{Platform: "slack", Space: "1234", Channel: "5678"}, base},
		{"web", Scope{Platform: "web", Channel: "5678"}, with(func(v *view) {
			v.Tags = map[string]bool{"plan": false, "agent_thought_chunk": true}
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := see(c.Policy(tc.scope))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Policy(%+v) (-want +got):\n%s", tc.scope, diff)
			}
			// A Config built by hand (no precomputed table) agrees.
			hand := c
			hand.res = nil
			if diff := cmp.Diff(tc.want, see(hand.Policy(tc.scope))); diff != "" {
				t.Errorf("uncached Policy(%+v) (-want +got):\n%s", tc.scope, diff)
			}
		})
	}
}

func TestPolicyResultIsTheCallers(t *testing.T) {
	c := mustLoad(t, overridesYAML, nil)
	s := Scope{Platform: "discord"}
	p := c.Policy(s)
	p.Stream.TagVisibility["plan"] = false
	if !c.Policy(s).Stream.TagVisibility["plan"] {
		t.Error("changing a returned policy changed the configuration")
	}
}

func TestPolicyConcurrent(t *testing.T) {
	c := mustLoad(t, overridesYAML, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := c.Policy(Scope{Platform: "discord", Space: "1234", Channel: "5678"}).Busy; got != "interrupt" {
					t.Errorf("busy = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestPolicyWithoutOverrides(t *testing.T) {
	c := Default(testPlatforms...)
	c.Busy = "interrupt"
	if got := c.Policy(Scope{Platform: "discord", Space: "1", Channel: "2"}); got.Busy != "interrupt" || got.Stream.MetaMode != "minimal" {
		t.Errorf("policy = %+v", got)
	}
}

func TestExplain(t *testing.T) {
	c := mustLoad(t, overridesYAML, []string{"GATEWAY_PERMISSIONS__POLICY=approve-reads"}, "typing.ttl=5m")
	got := Explain(c, Scope{Platform: "discord", Space: "1234", Channel: "5678"})
	for _, want := range []string{
		"# effective settings for discord, guild 1234, channel 5678\n",
		"# file: " + c.File() + "\n",
		"metaMode: minimal # overrides.discord.channels.5678\n",
		"deliveryMode: final_only # overrides.discord.guilds.1234\n",
		"usage_update: true # overrides.discord.settings\n",
		"plan: true # file\n",
		"tool_call: true # default\n",
		"maxTurnChars: 24000 # default\n",
		"mode: message # overrides.discord.guilds.1234\n",
		"ttl: 5m0s # --set\n",
		"busy: interrupt # overrides.discord.channels.5678\n",
		"policy: approve-reads # env GATEWAY_PERMISSIONS__POLICY\n",
		"timeout: 30s # overrides.discord.channels.5678\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Explain lacks %q:\n%s", want, got)
		}
	}
	// Explain's text is YAML for the same settings.
	m, err := parseYAML([]byte(got))
	if err != nil {
		t.Fatalf("Explain output is not YAML: %v\n%s", err, got)
	}
	if _, ok := m["acp"]; !ok || m["busy"] != "interrupt" {
		t.Errorf("parsed Explain = %v", m)
	}
}

// agent is overridable like the rest: agents.default at the base, the
// most specific body wins.
func TestPolicyAgent(t *testing.T) {
	c := mustLoad(t, `
agents:
  default: claude
  list:
    claude: {command: [claude-agent-acp]}
    codex: {command: [codex-acp]}
overrides:
  slack:
    workspaces: {T1: {agent: codex}}
    channels: {C9: {agent: demo}}
`, nil)
	for _, tc := range []struct {
		scope Scope
		want  string
	}{
		{Scope{Platform: slack.Platform, Space: "T2", Channel: "C1"}, "claude"},
		{Scope{Platform: slack.Platform, Space: "T1", Channel: "C1"}, "codex"},
		{Scope{Platform: slack.Platform, Space: "T1", Channel: "C9"}, "demo"},
		{Scope{Platform: web.Platform}, "claude"},
	} {
		if got := c.Policy(tc.scope).Agent; got != tc.want {
			t.Errorf("Policy(%+v).Agent = %q, want %q", tc.scope, got, tc.want)
		}
	}
	for scope, want := range map[Scope]string{
		{Platform: slack.Platform, Space: "T1", Channel: "C9"}: "agent: demo # overrides.slack.channels.C9\n",
		{Platform: slack.Platform, Space: "T2", Channel: "C1"}: "agent: claude # file\n",
	} {
		if got := Explain(c, scope); !strings.Contains(got, want) {
			t.Errorf("Explain(%+v) lacks %q:\n%s", scope, want, got)
		}
	}
	if got := Explain(mustLoad(t, "busy: queue\n", nil), Scope{Platform: web.Platform}); !strings.Contains(got, "agent: demo # default\n") {
		t.Errorf("Explain without agents lacks the demo agent:\n%s", got)
	}
}

// The web chat shows thoughts and the plan by default; what the operator
// sets wins, at the top or in overrides.web.settings.
func TestWebDefaults(t *testing.T) {
	vis := func(c Config, platform string) (thought, plan bool) {
		v := c.Policy(Scope{Platform: platform}).Stream.TagVisibility
		return v["agent_thought_chunk"], v["plan"]
	}
	for _, tc := range []struct {
		name, yaml         string
		thought, plan      bool // on the web
		discordThoughtPlan bool
	}{
		{"defaults", "busy: queue\n", true, true, false},
		{"the operator's top-level value", "acp: {stream: {tagVisibility: {plan: false}}}\n", true, false, false},
		{"shown everywhere", "acp: {stream: {tagVisibility: {plan: true, agent_thought_chunk: true}}}\n", true, true, true},
		{"overrides.web.settings", "overrides: {web: {settings: {acp: {stream: {tagVisibility: {agent_thought_chunk: false}}}}}}\n", false, true, false},
	} {
		c := mustLoad(t, tc.yaml, nil)
		if th, pl := vis(c, web.Platform); th != tc.thought || pl != tc.plan {
			t.Errorf("%s: web shows thoughts %v, plan %v; want %v, %v", tc.name, th, pl, tc.thought, tc.plan)
		}
		if th, pl := vis(c, discord.Platform); th != tc.discordThoughtPlan || pl != tc.discordThoughtPlan {
			t.Errorf("%s: discord shows thoughts %v, plan %v; want %v", tc.name, th, pl, tc.discordThoughtPlan)
		}
	}
	got := Explain(mustLoad(t, "busy: queue\n", nil), Scope{Platform: web.Platform})
	if !strings.Contains(got, "agent_thought_chunk: true # the web chat's default\n") {
		t.Errorf("Explain for the web lacks where the thoughts setting comes from:\n%s", got)
	}
}

// Budgets are a channel setting: the top level, then the overrides, key
// by key.
func TestBudgetOverrides(t *testing.T) {
	c := mustLoad(t, `
budgets: {tokensPerTurn: 100000, costPerChannelDay: 20}
overrides:
  slack:
    workspaces:
      T01: {budgets: {costPerThread: 5}}
    channels:
      C01: {budgets: {tokensPerTurn: 30000}}
`, nil)
	for _, tc := range []struct {
		scope Scope
		want  session.Budgets
	}{
		{Scope{Platform: "web", Channel: "x"}, session.Budgets{TokensPerTurn: 100000, CostPerChannelDay: 20}},
		{Scope{Platform: "slack", Space: "T01", Channel: "C02"}, session.Budgets{TokensPerTurn: 100000, CostPerThread: 5, CostPerChannelDay: 20}},
		{Scope{Platform: "slack", Space: "T01", Channel: "C01"}, session.Budgets{TokensPerTurn: 30000, CostPerThread: 5, CostPerChannelDay: 20}},
	} {
		if got := c.Policy(tc.scope).Budgets; got != tc.want {
			t.Errorf("%+v: budgets %+v, want %+v", tc.scope, got, tc.want)
		}
	}
	if _, err := load(t, "overrides: {slack: {channels: {C01: {budgets: {costPerThread: -1}}}}}\n", nil); err == nil ||
		!strings.Contains(err.Error(), "overrides.slack.channels.C01.budgets.costPerThread") {
		t.Errorf("a negative budget: %v", err)
	}
}
