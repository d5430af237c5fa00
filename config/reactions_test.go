package config

import (
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/session"
)

// TestReactions: reactions default to on with a 2m stall mark, can be
// turned off per channel, and a bad value names the key and the allowed
// values.
func TestReactions(t *testing.T) {
	c := mustLoad(t, `
reactions: {stallAfter: 30s}
overrides:
  discord:
    channels:
      "42": {reactions: {mode: "off"}}
`, nil)
	if got := c.Policy(Scope{Platform: "discord"}).Reactions; got != (session.Reactions{Mode: "on", StallAfter: 30 * time.Second}) {
		t.Errorf("discord: %+v", got)
	}
	if got := c.Policy(Scope{Platform: "discord", Channel: "42"}).Reactions; got.On() || got.StallAfter != 30*time.Second {
		t.Errorf("discord channel 42: %+v, want off with the top's stallAfter", got)
	}
	if got := mustLoad(t, "", nil).Policy(Scope{Platform: "slack"}).Reactions; got != session.DefaultReactions() || !got.On() || got.StallAfter != 2*time.Minute {
		t.Errorf("defaults: %+v", got)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"reactions: {mode: maybe}", "reactions.mode"},
		{"reactions: {stallAfter: 48h}", "reactions.stallAfter"},
		{"overrides: {slack: {settings: {reactions: {mode: sometimes}}}}", "overrides.slack.settings.reactions.mode"},
	} {
		_, err := load(t, bad.yaml, nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want one naming %s", bad.yaml, err, bad.want)
		}
	}
	_, err := load(t, "reactions: {mode: maybe}", nil)
	if err == nil || !strings.Contains(err.Error(), "on off") {
		t.Errorf("error %v does not list the allowed values", err)
	}
}
