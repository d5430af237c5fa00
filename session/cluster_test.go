package session_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
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

// A turn cut off on a worker that went away is answered by the worker
// that takes the thread over: one notice, then the whole answer to the
// same prompt, in the same session, and no mark left. Cut off again, it
// is not asked a third time: the next worker says to send it again.
func TestAdoptAsksACutOffTurnAgain(t *testing.T) {
	opts := envOptions{dir: t.TempDir(), shared: true, rec: channeltest.Options{Edit: true, Typing: true}}
	a := newEnv(t, opts)
	th := a.rec.Thread("taken")
	a.say(th, ann, "echo hello")
	a.waitEnd(th)
	first, ok, err := a.st.Binding(a.ctx(), th)
	if err != nil || !ok {
		t.Fatalf("binding: %v, %v", ok, err)
	}
	a.say(th, ann, "slow 40")
	a.waitOp(th, "the answer streaming on A", hasText("quick brown"))
	cut := runningIn(t, a.st, th)
	if cut.Prompt.Text != "slow 40" || cut.Prompt.ID != "in-slow 40" || cut.Prompt.Author.ID != ann.ID || cut.Prompt.Author.Name != ann.Name || cut.Attempts != 0 {
		t.Fatalf("A's running mark = %+v, want the prompt slow 40 by Ann, not taken over", cut)
	}
	// A worker killed leaves its mark. A's shutdown (a drain past its
	// deadline) told its thread and cleared it: nothing there to answer
	// again. Put it back as a killed A would have left it.
	a.close()
	if got := a.messages(th, channels.KindNotice); len(got) != 1 || got[0].Text != sysmsg.Text(sysmsg.Interrupted{}) {
		t.Errorf("A's shutdown told %+v, want the interrupted notice", got)
	}
	b := newEnv(t, opts)
	if rs, _ := b.st.RunningTurns(b.ctx()); len(rs) != 0 {
		t.Errorf("A's shutdown left marks %+v: the turn it told would be answered again", rs)
	}
	if err := b.st.MarkTurnRunning(b.ctx(), cut); err != nil {
		t.Fatal(err)
	}
	b.r.Adopt(b.ctx(), th)
	b.waitOp(th, "the answer streaming on B", hasText("quick brown"))
	again := runningIn(t, b.st, th)
	if again.Attempts != 1 || again.Prompt.Text != cut.Prompt.Text || again.Prompt.ID != cut.Prompt.ID {
		t.Fatalf("B's running mark = %+v, want the same prompt taken over once", again)
	}
	b.waitEnd(th)
	wantNotices(t, b, th, sysmsg.WorkerLost{Again: true})
	// The whole answer: what the agent answers the prompt in a thread of
	// its own.
	solo := b.rec.Thread("solo")
	b.say(solo, ann, "slow 40")
	b.waitEnd(solo)
	if got, want := b.text(th), b.text(solo); got != want || !strings.Contains(got, "quick brown") {
		t.Errorf("answer on B = %q, want %q", got, want)
	}
	if bnd, _, _ := b.st.Binding(b.ctx(), th); bnd.SessionID != first.SessionID {
		t.Errorf("answered again in session %s, want %s resumed", bnd.SessionID, first.SessionID)
	}
	if rs, _ := b.st.RunningTurns(b.ctx()); slices.ContainsFunc(rs, func(r store.RunningTurn) bool { return r.Thread == th }) {
		t.Errorf("a mark is left after the answer: %+v", rs)
	}

	// B went away during that answer: C does not ask it a third time.
	b.close()
	c := newEnv(t, opts)
	if err := c.st.MarkTurnRunning(c.ctx(), again); err != nil {
		t.Fatal(err)
	}
	c.r.Adopt(c.ctx(), th)
	if rs, _ := c.st.RunningTurns(c.ctx()); len(rs) != 0 {
		t.Errorf("a mark is left after the second take-over: %+v", rs)
	}
	c.say(th, ann, "echo after")
	c.waitEnd(th)
	wantNotices(t, c, th, sysmsg.WorkerLost{})
	if got := c.text(th); strings.Contains(got, "quick brown") || !strings.Contains(got, "after") {
		t.Errorf("answers on C = %q, want only the next message's", got)
	}
}

// runningIn returns the running mark of th.
func runningIn(t *testing.T, st store.Backend, th channels.ThreadRef) store.RunningTurn {
	t.Helper()
	rs, err := st.RunningTurns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Thread == th {
			return r
		}
	}
	t.Fatalf("no running mark in %s: %+v", th, rs)
	return store.RunningTurn{}
}

// wantNotices checks the notices of th, exactly, once there are as many
// as wanted (they go through the thread's lane).
func wantNotices(t *testing.T, e *env, th channels.ThreadRef, want ...sysmsg.Notice) {
	t.Helper()
	enough := func([]channeltest.Op) bool { return len(e.messages(th, channels.KindNotice)) >= len(want) }
	if err := e.rec.WaitFor(e.ctx(), th, enough); err != nil {
		t.Errorf("waiting for %d notices in %s: %v", len(want), th, err)
	}
	var got, texts []string
	for _, m := range e.messages(th, channels.KindNotice) {
		got = append(got, m.Text)
	}
	for _, n := range want {
		texts = append(texts, sysmsg.Text(n))
	}
	if !slices.Equal(got, texts) {
		t.Errorf("notices in %s:\n%q\nwant\n%q", th, got, texts)
	}
}

// A cut-off prompt asked again that begins no turn (its agent cannot
// start here) leaves no mark: a drain would wait for it, and the next
// worker would say a turn was cut off that never ran.
func TestAdoptClearsTheMarkWhenNoTurnBegins(t *testing.T) {
	broken := agent.Spec{Name: "broken", Command: []string{filepath.Join(t.TempDir(), "no-such-agent")}}
	e := newEnv(t, envOptions{shared: true, spec: &broken})
	th := e.rec.Thread("broken")
	cut := store.RunningTurn{Thread: th, SessionID: "s-gone", Started: time.UnixMilli(1000), Prompt: store.TurnPrompt{ID: "in-x", Author: ann, Text: "echo x"}}
	if err := e.st.MarkTurnRunning(e.ctx(), cut); err != nil {
		t.Fatal(err)
	}
	e.r.Adopt(e.ctx(), th)
	// The owner takes its messages in order: once a later one failed to
	// start too, the earlier ones' starts have been settled (the last
	// one's mark may still be on its way out).
	e.say(th, ann, "echo y")
	e.say(th, ann, "echo z")
	failed := func(ops []channeltest.Op) bool {
		n := 0
		for _, m := range e.messages(th, channels.KindNotice) {
			if strings.Contains(m.Text, "no-such-agent") {
				n++
			}
		}
		return n == 3
	}
	if err := e.rec.WaitFor(e.ctx(), th, failed); err != nil {
		t.Fatalf("waiting for the three starts to fail: %v; notices %+v", err, e.messages(th, channels.KindNotice))
	}
	if got := e.messages(th, channels.KindNotice)[0].Text; got != sysmsg.Text(sysmsg.WorkerLost{Again: true}) {
		t.Errorf("first notice %q, want the answer-again one", got)
	}
	rs, err := e.st.RunningTurns(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Prompt.Text != "echo z" {
			t.Errorf("mark left: %+v", r)
		}
	}
}

// A cut-off prompt whose author may not prompt here is not asked again:
// the thread is told to send it again, and no mark is left.
func TestAdoptDoesNotAskARefusedPromptAgain(t *testing.T) {
	e := newEnv(t, envOptions{shared: true, access: map[string]session.AccessRule{"web": {Users: []string{bob.ID}}}})
	th := e.rec.Thread("refused")
	cut := store.RunningTurn{Thread: th, SessionID: "s-gone", Started: time.UnixMilli(1000), Prompt: store.TurnPrompt{ID: "in-x", Author: ann, Text: "echo x"}}
	if err := e.st.MarkTurnRunning(e.ctx(), cut); err != nil {
		t.Fatal(err)
	}
	e.r.Adopt(e.ctx(), th)
	wantNotices(t, e, th, sysmsg.WorkerLost{})
	if rs, _ := e.st.RunningTurns(e.ctx()); len(rs) != 0 {
		t.Errorf("marks left: %+v", rs)
	}
}
