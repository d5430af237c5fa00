package config

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/session"
)

// TestContextBackfill: context.backfill defaults to 30 messages and 8,000
// characters, is set at the top, overridden per channel, and checked.
func TestContextBackfill(t *testing.T) {
	c, err := load(t, `
context: {backfill: {messages: 10}}
overrides:
  slack:
    channels: {C1: {context: {backfill: {messages: 0}}}, C2: {context: {backfill: {chars: 500}}}}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		channel string
		want    session.Backfill
	}{
		{"C0", session.Backfill{Messages: 10, Chars: 8000}},
		{"C1", session.Backfill{Messages: 0, Chars: 8000}},
		{"C2", session.Backfill{Messages: 10, Chars: 500}},
	} {
		if got := c.Policy(Scope{Platform: "slack", Channel: tc.channel}).Context.Backfill; got != tc.want {
			t.Errorf("%s: backfill = %+v, want %+v", tc.channel, got, tc.want)
		}
	}
	if d := defaults(lookupIn(nil), nil).Context.Backfill; d != (session.Backfill{Messages: 30, Chars: 8000}) {
		t.Errorf("default backfill = %+v", d)
	}
	_, err = load(t, "context: {backfill: {messages: 500, chars: -1}}\n", nil)
	if err == nil || !strings.Contains(err.Error(), "context.backfill.messages") || !strings.Contains(err.Error(), "context.backfill.chars") {
		t.Errorf("err = %v, want both keys named", err)
	}
}
