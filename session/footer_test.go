package session_test

import (
	"regexp"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// With acp.stream.footer: compact, each turn of the demo agent ends with
// one footer line: the time, and what the agent reported (the "usage"
// scenario reports 4,200 of 200,000 tokens and $0.0123); off, no line.
func TestTurnFooter(t *testing.T) {
	p := session.DefaultPolicy()
	p.Stream.Footer = "compact"
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, policy: &p})
	th := e.rec.Thread("footer")
	e.say(th, ann, "usage")
	e.waitEnd(th)
	want := regexp.MustCompile(`^⏱ \d+s · 4\.2k tokens · 2% context · \$0\.01$`)
	var footers []string
	for _, m := range e.messages(th, channels.KindStatus) {
		footers = append(footers, m.Text)
	}
	if len(footers) != 1 || !want.MatchString(footers[0]) {
		t.Errorf("status lines %q, want one footer matching %s", footers, want)
	}

	off := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th = off.rec.Thread("no-footer")
	off.say(th, ann, "usage")
	off.waitEnd(th)
	if got := off.messages(th, channels.KindStatus); len(got) != 0 {
		t.Errorf("footer off: status lines %+v", got)
	}
}
