package session_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// command sends text, one of the gateway's commands, as an adapter does.
func (e *env) command(th channels.ThreadRef, who channels.Author, text string) {
	e.t.Helper()
	c := channels.ParseCommand(text)
	if c == nil {
		e.t.Fatalf("%q is no gateway command", text)
	}
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: who, Text: text, Command: c, ID: e.messageID("in-" + who.ID + text), Reply: e.rec.ReplyFunc(th)}); err != nil {
		e.t.Fatalf("deliver %q: %v", text, err)
	}
}

// framesWith counts the frames of every event log that contain sub.
func (e *env) framesWith(sub string) int {
	e.t.Helper()
	n := 0
	files, _ := filepath.Glob(filepath.Join(e.dir, "events", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			e.t.Fatal(err)
		}
		n += strings.Count(string(b), sub)
	}
	return n
}

func isReply(sub string) func(channeltest.Op) bool {
	return func(op channeltest.Op) bool { return op.Op == "reply" && strings.Contains(op.Text, sub) }
}

// The demo agent as a subprocess: /model reaches
// session/set_config_option; only operators change the session; a bad
// value gets the valid ones; /new starts a new session, to which the
// thread's choice is applied again; /status shows it.
func TestCommandsEndToEnd(t *testing.T) {
	e := newEnv(t, envOptions{open: true, access: map[string]session.AccessRule{"web": {Approvers: []string{ann.ID}}}})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "cmd"}

	e.command(th, ann, "/model")
	e.waitOp(th, "the model is not known yet", isReply("send a message first"))

	e.say(th, ann, "hello")
	e.waitEnd(th)
	b1, _, err := e.st.Binding(e.ctx(), th)
	if err != nil {
		t.Fatal(err)
	}

	e.command(th, bob, "/model demo-smart")
	e.waitOp(th, "a refusal for Bob", isReply("only operators can use /model"))
	e.command(th, bob, "/model")
	e.waitOp(th, "the choices for Bob", isReply("Demo Fast (current), Demo Smart"))
	e.command(th, ann, "/model gpt-9")
	e.waitOp(th, "the valid models", isReply(`"gpt-9" is not a model here. Choose one of: demo-fast, demo-smart.`))
	if n := e.framesWith("session/set_config_option"); n != 0 {
		t.Fatalf("%d set_config_option frames before a valid change", n)
	}

	e.command(th, ann, "/model Demo Smart")
	e.waitOp(th, "the confirmation", hasText("Ann set the model to Demo Smart."))
	if n := e.framesWith(`"method":"session/set_config_option"`); n != 1 {
		t.Fatalf("%d session/set_config_option requests, want 1", n)
	}
	e.command(th, ann, "/effort")
	e.waitOp(th, "the effort's choices", isReply("The effort:"))

	e.command(th, bob, "/new")
	e.waitOp(th, "a refusal of /new for Bob", isReply("only operators can use /new"))
	e.command(th, ann, "/new")
	e.waitOp(th, "the new session", hasText("Ann ended this thread's session"))
	e.say(th, ann, "hello again")
	e.waitEnd(th)
	b2, _, err := e.st.Binding(e.ctx(), th)
	if err != nil {
		t.Fatal(err)
	}
	if b2.SessionID == "" || b2.SessionID == b1.SessionID {
		t.Fatalf("after /new the thread is bound to session %q, before to %q", b2.SessionID, b1.SessionID)
	}
	// The choice holds for the new session: set again before its prompt.
	if n := e.framesWith(`"method":"session/set_config_option"`); n != 2 {
		t.Fatalf("%d session/set_config_option requests, want 2 (the new session's too)", n)
	}
	e.say(th, ann, "usage")
	e.waitEnd(th)
	e.command(th, bob, "/status")
	e.waitOp(th, "the status", isReply("Agent: demo · Model: Demo Smart · Mode: "))
	e.waitOp(th, "the status's context and cost", isReply("Context: 4200 of 200k (2%) · Cost: 0.01 USD · Idle"))
	e.command(th, bob, "/help")
	help := e.waitOp(th, "the help", isReply("/model [model]"))
	// The demo agent's own help and stop are hidden by the gateway's: said
	// so, not listed as if typing them reached the agent.
	if strings.Contains(help.Text, "/help — List the demo scenarios") || !strings.Contains(help.Text, "The agent also has /help, /stop, but the gateway's commands of the same name take them") {
		t.Errorf("the help does not say that the agent's /help is out of reach:\n%s", help.Text)
	}
}

// /sessions lists the demo agent's sessions, this thread's and those no
// other thread has; /attach binds one another thread let go, which the
// next message loads (its history not posted); /agent moves a thread to
// another agent of the list.
func TestAttachAndAgentEndToEnd(t *testing.T) {
	dir := t.TempDir()
	demo := demoSpec(filepath.Join(dir, "demo-state"))
	other := demo
	other.Name = "other"
	policy := session.DefaultPolicy()
	policy.Agents = []string{"demo", "other"}
	e := newEnv(t, envOptions{dir: dir, policy: &policy, open: true, access: map[string]session.AccessRule{"web": {Approvers: []string{ann.ID}}},
		agents: func(name string) (agent.Spec, bool) {
			switch name {
			case "", "demo":
				return demo, true
			case "other":
				return other, true
			}
			return agent.Spec{}, false
		}})
	a := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "a"}
	b := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "b"}
	binding := func(th channels.ThreadRef) store.Binding {
		t.Helper()
		bd, ok, err := e.st.Binding(e.ctx(), th)
		if err != nil || !ok {
			t.Fatalf("binding of %s: %v, %v", th, ok, err)
		}
		return bd
	}
	e.say(a, ann, "echo first thread")
	e.waitEnd(a)
	sa := binding(a).SessionID
	e.say(b, ann, "echo second thread")
	e.waitEnd(b)
	sb := binding(b).SessionID
	e.command(b, ann, "/attach "+sa)
	e.waitOp(b, "a refusal of a session another thread has", isReply("belongs to another thread here"))
	// Another thread's session is not listed here.
	e.command(b, bob, "/sessions")
	if op := e.waitOp(b, "the sessions", isReply(sb)); strings.Contains(op.Text, sa) {
		t.Fatalf("/sessions in b lists a's session %s: %q", sa, op.Text)
	} else if !regexp.MustCompile(`\(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)`).MatchString(op.Text) || regexp.MustCompile(`\.\d{6,}`).MatchString(op.Text) {
		t.Errorf("/sessions shows its times as %q, want them to the minute (2026-12-02 15:20 UTC)", op.Text)
	}
	// Thread a lets its session go (/new): it is the agent's alone, as
	// one started in a terminal.
	e.command(a, ann, "/new")
	e.waitOp(a, "the new session", hasText("Ann ended this thread's session"))

	e.command(b, bob, "/sessions")
	e.waitOp(b, "the sessions", isReply(sa))
	e.command(b, bob, "/attach "+sa)
	e.waitOp(b, "a refusal of /attach", isReply("only operators can use /attach"))
	e.command(b, ann, "/attach "+sa)
	e.waitOp(b, "the attach line", hasText("Ann attached session "+sa))
	if got := binding(b).SessionID; got != sa {
		t.Fatalf("after /attach, b is bound to %q, want %q", got, sa)
	}
	e.say(b, ann, "echo continued")
	e.waitEnd(b)
	if got := binding(b).SessionID; got != sa {
		t.Fatalf("after a turn, b is bound to %q, want %q", got, sa)
	}
	if !strings.Contains(e.text(b), "continued") {
		t.Fatalf("no answer in b: %q", e.text(b))
	}
	if n := e.framesWith(`"method":"session/resume"`); n != 1 {
		t.Fatalf("%d session/resume requests, want 1 (the attached session)", n)
	}
	if strings.Contains(e.text(b), "first thread") {
		t.Fatalf("the attached session's history was posted: %q", e.text(b))
	}

	e.command(a, bob, "/agent")
	e.waitOp(a, "the agents", isReply("demo (current), other"))
	e.command(a, ann, "/agent nobody")
	e.waitOp(a, "the agents for a bad name", isReply("pick one of: demo, other"))
	e.command(a, ann, "/agent other")
	e.waitOp(a, "the move", hasText("Ann moved this thread to other"))
	e.say(a, ann, "hi")
	e.waitEnd(a)
	if bd := binding(a); bd.Agent != "other" || bd.SessionID == sa || bd.SessionID == "" || bd.SessionID == binding(b).SessionID {
		t.Fatalf("after /agent other: binding %+v", bd)
	}
}

// Without a value, /model shows the models as buttons (the current one
// marked); Bob's click is refused, Ann's sets the model in the agent.
func TestPickAModelEndToEnd(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Prompt: true, Edit: true}, open: true, access: map[string]session.AccessRule{"web": {Approvers: []string{ann.ID}}}})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "pick"}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.command(th, bob, "/model")
	op := e.waitOp(th, "the model's choices", func(op channeltest.Op) bool { return isPrompt(op) && strings.Contains(op.Text, "Pick the model") })
	if !strings.Contains(op.Text, "Pick the model (now Demo Fast)") {
		t.Errorf("the picker's header %q does not name the current model (not its id)", op.Text)
	}
	m, ok := e.rec.Message(op.Msg)
	if !ok || len(m.Options) != 2 || !strings.HasSuffix(m.Options[1], "demo-smart") {
		t.Fatalf("the choices: %+v", m)
	}
	h := channels.Handle{Thread: th, ID: op.Msg}
	if err := e.rec.Click(e.ctx(), bob, h, m.Options[1]); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "Bob's refusal", isReply("only operators can use /model"))
	if err := e.rec.Click(e.ctx(), ann, h, m.Options[1]); err != nil {
		t.Fatal(err)
	}
	// The choices fold into the confirmation.
	e.waitOp(th, "the confirmation", func(o channeltest.Op) bool {
		return o.Op == "edit" && o.Msg == op.Msg && strings.Contains(o.Text, "Ann set the model to Demo Smart.")
	})
	if m, _ := e.rec.Message(op.Msg); !strings.Contains(m.Text, "Ann set the model to Demo Smart.") || len(m.Options) != 0 {
		t.Fatalf("the choices after the pick: %+v", m)
	}
	if n := e.framesWith(`"method":"session/set_config_option"`); n != 1 {
		t.Fatalf("%d session/set_config_option requests, want 1", n)
	}
}

// A request for suggestions gets the values that match what was typed.
func TestSuggestEndToEnd(t *testing.T) {
	e := newEnv(t, envOptions{})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "suggest"}
	ask := func(name, typed string) []channels.Option {
		t.Helper()
		got := make(chan []channels.Option, 1)
		in := channels.Inbound{Thread: th, Author: ann, Command: &channels.Command{Name: name, Args: typed},
			Suggest: func(_ context.Context, opts []channels.Option) error { got <- opts; return nil }}
		if err := e.rec.Deliver(e.ctx(), in); err != nil {
			t.Fatal(err)
		}
		select {
		case opts := <-got:
			return opts
		case <-e.ctx().Done():
			t.Fatalf("no suggestions for /%s %s", name, typed)
			return nil
		}
	}
	if got := ask("model", "sm"); len(got) != 0 {
		t.Fatalf("suggestions before the thread ran: %v", got)
	}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	if got, want := ask("model", "SM"), []channels.Option{{ID: "demo-smart", Label: "Demo Smart"}}; !slices.Equal(got, want) {
		t.Fatalf("/model SM: suggestions %v, want %v", got, want)
	}
	if got := ask("set", ""); len(got) != 4 || got[0].ID != "model" || got[3].ID != "fast" {
		t.Fatalf("/set: suggestions %v, want the four options", got)
	}
}

// shower is an adapter that shows the thread's session.
type shower struct {
	channels.Adapter
	shown chan channels.SessionInfo
}

func (s shower) ShowSession(_ channels.ThreadRef, info channels.SessionInfo) {
	select {
	case s.shown <- info:
	default:
	}
}

// An adapter that shows the session is told it at the start and when an
// option changes.
func TestSessionShownEndToEnd(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	sh := shower{Adapter: rec.Adapter(), shown: make(chan channels.SessionInfo, 100)}
	e := newEnv(t, envOptions{recorder: rec, adapter: sh})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "shown"}
	wait := func(ok func(channels.SessionInfo) bool) channels.SessionInfo {
		t.Helper()
		for {
			select {
			case info := <-sh.shown:
				if ok(info) {
					return info
				}
			case <-e.ctx().Done():
				t.Fatal("the session was not shown")
			}
		}
	}
	e.say(th, ann, "hello")
	info := wait(func(i channels.SessionInfo) bool { return i.Model != "" })
	if info.Agent != "demo" || info.Model != "Demo Fast" || len(info.Settings) != 4 || info.Settings[3].ID != "fast" || len(info.Settings[3].Values) != 2 || info.Settings[3].Values[0].Label != "on" {
		t.Fatalf("at the start: %+v", info)
	}
	e.waitEnd(th)
	e.command(th, ann, "/model demo-smart")
	wait(func(i channels.SessionInfo) bool { return i.Model == "Demo Smart" })
}

// The thread's choice is stored: after a restart of the gateway, a new
// session of the thread gets it too.
func TestChoiceSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, envOptions{dir: dir})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "restart"}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.command(th, ann, "/model demo-smart")
	e.waitOp(th, "the confirmation", hasText("Ann set the model to Demo Smart."))
	e.close()

	e = newEnv(t, envOptions{dir: dir})
	e.command(th, ann, "/new")
	e.waitOp(th, "the new session", hasText("Ann ended this thread's session"))
	e.say(th, ann, "hello again")
	e.waitEnd(th)
	if n := e.framesWith(`"method":"session/set_config_option"`); n != 2 {
		t.Fatalf("%d session/set_config_option requests, want 2 (the new session's too)", n)
	}
	e.command(th, ann, "/status")
	e.waitOp(th, "the status", isReply("Model: Demo Smart"))
}

// A deleted thread's session is never resumed: /attach refuses it, and
// /sessions does not list it.
func TestAttachRefusesADeletedThreadsSession(t *testing.T) {
	e := newEnv(t, envOptions{open: true, access: map[string]session.AccessRule{"web": {Approvers: []string{ann.ID}}}})
	a := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "a"}
	b := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "b"}
	e.say(a, ann, "echo first thread")
	e.waitEnd(a)
	bd, _, err := e.st.Binding(e.ctx(), a)
	if err != nil || bd.SessionID == "" {
		t.Fatalf("binding of a: %+v %v", bd, err)
	}
	sa := bd.SessionID
	e.say(b, ann, "echo second thread")
	e.waitEnd(b)
	e.closeThread(a)
	e.command(b, bob, "/sessions")
	sb, _, _ := e.st.Binding(e.ctx(), b)
	if op := e.waitOp(b, "the sessions", isReply(sb.SessionID)); strings.Contains(op.Text, sa) {
		t.Errorf("/sessions lists the deleted thread's session %s: %q", sa, op.Text)
	}
	e.command(b, ann, "/attach "+sa)
	e.waitOp(b, "the refusal", isReply("belonged to a thread that was deleted"))
	if got, _, _ := e.st.Binding(e.ctx(), b); got.SessionID == sa {
		t.Fatalf("b is bound to the deleted thread's session %s", sa)
	}
	e.say(b, ann, "echo still mine")
	e.waitEnd(b)
	if n := e.framesWith(`"method":"session/resume"`) + e.framesWith(`"method":"session/load"`); n != 0 {
		t.Errorf("%d session/resume or session/load requests, want none", n)
	}
}

// Of two threads attaching one session at once, one gets it and the
// other is told it is taken.
func TestAttachAtOnceOneWins(t *testing.T) {
	e := newEnv(t, envOptions{open: true, access: map[string]session.AccessRule{"web": {Approvers: []string{ann.ID}}}})
	a := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "a"}
	e.say(a, ann, "echo first thread")
	e.waitEnd(a)
	bd, _, _ := e.st.Binding(e.ctx(), a)
	sa := bd.SessionID
	e.command(a, ann, "/new")
	e.waitOp(a, "the new session", hasText("Ann ended this thread's session"))
	x := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "x"}
	y := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "y"}
	var wg sync.WaitGroup
	for _, th := range []channels.ThreadRef{x, y} {
		wg.Go(func() { e.command(th, ann, "/attach "+sa) })
	}
	wg.Wait()
	won, lost := 0, 0
	for _, th := range []channels.ThreadRef{x, y} {
		op := e.waitOp(th, "the attach's answer", func(op channeltest.Op) bool {
			return strings.Contains(op.Text, "attached session "+sa) || strings.Contains(op.Text, "belongs to another thread here")
		})
		if strings.Contains(op.Text, "attached session") {
			won++
		} else {
			lost++
		}
	}
	if won != 1 || lost != 1 {
		t.Fatalf("%d attaches won and %d were refused, want 1 and 1", won, lost)
	}
}
