package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// MayPrompt, which an edge answers Discord's Admit with, judges as the
// router does: default-deny without a rule except on an open platform,
// users and roles, places, bots.
func TestMayPrompt(t *testing.T) {
	th := channels.ThreadRef{Platform: "discord", Channel: "c1", Thread: "t1"}
	rules := map[string]session.AccessRule{"discord": {Users: []string{"u-ann"}, Roles: []string{"r-dev"}, Guilds: []string{"g1"}}}
	for _, c := range []struct {
		name  string
		rules map[string]session.AccessRule
		open  []string
		in    channels.Inbound
		want  bool
	}{
		{"no rule: denied", nil, nil, channels.Inbound{Thread: th, Author: ann}, false},
		{"no rule on an open platform", nil, []string{"discord"}, channels.Inbound{Thread: th, Author: ann}, true},
		{"a listed user in an allowed guild", rules, nil, channels.Inbound{Thread: th, Space: "g1", Author: ann}, true},
		{"a listed user elsewhere", rules, nil, channels.Inbound{Thread: th, Space: "g2", Author: ann}, false},
		{"a listed role", rules, nil, channels.Inbound{Thread: th, Space: "g1", Author: channels.Author{ID: "u-x", Roles: []string{"r-dev"}}}, true},
		{"nobody listed", rules, nil, channels.Inbound{Thread: th, Space: "g1", Author: bob}, false},
		{"a bot, even listed", rules, nil, channels.Inbound{Thread: th, Space: "g1", Author: channels.Author{ID: "u-ann", Bot: true}}, false},
	} {
		if got := session.MayPrompt(c.rules, c.open, c.in); got != c.want {
			t.Errorf("%s: MayPrompt = %v, want %v", c.name, got, c.want)
		}
	}
}

// A thread disowned (its lease moved to another worker) stops here
// without a word in the thread, keeping its binding: the thread's next
// message resumes the same session.
func TestDisownDropsWithoutAWord(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}})
	th := e.rec.Thread("moved")
	e.say(th, ann, "echo first")
	e.waitEnd(th)
	first, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok {
		t.Fatalf("binding: %v, %v", ok, err)
	}
	e.say(th, ann, "slow 400")
	e.waitOp(th, "streaming", func(op channeltest.Op) bool { return strings.Contains(op.Text, "quick brown") })
	e.r.Disown(th)
	e.waitAgent(th, "stopped")
	for _, m := range e.rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindNotice {
			t.Errorf("the disowned thread was told %q", m.Text)
		}
	}
	if b, ok, err := e.st.Binding(e.ctx(), th); err != nil || !ok || b.SessionID != first.SessionID {
		t.Fatalf("binding after Disown: %+v %v %v, want session %s kept", b, ok, err, first.SessionID)
	}
	e.say(th, ann, "echo back")
	e.waitEnd(th)
	if b, _, _ := e.st.Binding(e.ctx(), th); b.SessionID != first.SessionID {
		t.Errorf("the thread came back in session %s, want %s resumed", b.SessionID, first.SessionID)
	}
}
