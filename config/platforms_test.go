package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/thread"
)

// teamsConfig is a platform this package has never heard of.
type teamsConfig struct {
	// Token is its secret.
	Token string `koanf:"token" secret:"true"`
	// Region is where it runs.
	Region string `koanf:"region" validate:"oneof=eu us"`
}

func (c teamsConfig) Info() channels.SectionInfo {
	return channels.SectionInfo{Space: "tenant", Spaces: "tenants", ChannelOverrides: true, Enable: "channels.teams.token", SecretPrefixes: []string{"tt-"}}
}
func (c teamsConfig) On(bool) bool { return c.Token != "" }
func (c teamsConfig) Validate(path string, on bool) []error {
	if on && strings.Contains(c.Token, " ") {
		return []error{&channels.ConfigError{Key: path + ".token", Msg: "has a space"}}
	}
	return nil
}

var teams = []Platform{{Name: "teams", Defaults: teamsConfig{Region: "eu"}}}

// A platform is a section given by the caller: its settings, overrides
// under its own word for its spaces, access rules, explanations and
// masking follow from it, with no change to this package.
func TestAnotherPlatform(t *testing.T) {
	yaml := `
channels:
  teams: {token: tt-secret, region: us}
access:
  teams: {users: [u1]}
overrides:
  teams:
    tenants:
      acme: {busy: interrupt}
    channels:
      c1: {typing: {mode: never}}
`
	o := LoadOptions{Platforms: teams, Path: writeYAML(t, yaml), Environ: testEnv}
	c, err := o.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := SectionOf[teamsConfig](c, "teams"); got.Region != "us" || got.Token != "tt-secret" {
		t.Errorf("section = %+v", got)
	}
	if got := c.Platforms(); !slices.Equal(got, []string{"teams"}) {
		t.Errorf("Platforms() = %v", got)
	}
	if p := c.Policy(Scope{Platform: "teams", Space: "acme", Channel: "c1"}); p.Busy != thread.BusyInterrupt || p.Typing.Mode != "never" {
		t.Errorf("policy = %+v", p)
	}
	ex := Explain(c, Scope{Platform: "teams", Space: "acme", Channel: "c1"})
	for _, want := range []string{"# effective settings for teams, tenant acme, channel c1\n", "busy: interrupt # overrides.teams.tenants.acme\n", "mode: never # overrides.teams.channels.c1\n"} {
		if !strings.Contains(ex, want) {
			t.Errorf("Explain lacks %q:\n%s", want, ex)
		}
	}
	red := Redacted(c)
	if strings.Contains(red, "tt-secret") || !strings.Contains(red, "token: tt-***\n") || !strings.Contains(red, "  teams:\n    token: tt-***\n    region: us\n") {
		t.Errorf("Redacted:\n%s", red)
	}
	if !slices.Contains(Keys(teams...), "overrides.teams.tenants.*") || slices.Contains(Keys(teams...), "channels.web.listen") {
		t.Errorf("Keys() = %v", Keys(teams...))
	}

	// Its errors, the platform's own among them.
	o.Path = writeYAML(t, `
channels:
  teams: {token: "a b", region: mars, tokn: x}
access:
  web: {}
overrides:
  teams:
    guilds: {}
    tenants: {acme: {busy: later}}
`)
	o.Environ = append(o.Environ, "GATEWAY_CHANNELS__TEAMS__REGON=eu")
	_, err = o.Load()
	want := strings.Join([]string{
		`GATEWAY_CHANNELS__TEAMS__REGON: names no configuration key (did you mean GATEWAY_CHANNELS__TEAMS__REGION, which sets channels.teams.region?)`,
		`access.web: unknown platform (allowed: teams)`,
		`channels.teams.region: must be one of eu us, got "mars"`,
		`channels.teams.token: has a space`,
		`channels.teams.tokn: unknown key (did you mean channels.teams.token?)`,
		`overrides.teams.guilds: unknown key`,
		`overrides.teams.tenants.acme.busy: must be one of queue interrupt, got "later"`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant:\n%s", err, want)
	}

	// No platform on: the error says what turns one on.
	o.Path, o.Environ = "", testEnv
	if _, err := o.Load(); err == nil || err.Error() != "channels: no platform is configured (set channels.teams.token)" {
		t.Errorf("err = %v", err)
	}
}
