package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// closeThread delivers that th was deleted and waits until the router
// says it is done with it.
func (e *env) closeThread(th channels.ThreadRef) {
	e.t.Helper()
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Closed: true, ID: channels.MessageID("closed-" + th.Thread)}); err != nil {
		e.t.Fatal(err)
	}
	e.logs.waitFor(e.t, e.ctx(), `binding forgotten" thread.platform=`+th.Platform+" thread.channel="+th.Channel+" thread.thread="+th.Thread+" ")
}

// alive reports whether process pid exists (the gateway reaps its
// agents: one that exited is gone).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// TestClosedThread: a deleted thread's running turn is cancelled, pending
// permission prompts are cancelled, its queue is dropped, its agent
// stops, its binding and its turn's running mark are gone (a restart
// does not tell the deleted thread it was cut off), and a message
// to the same id later starts a new session instead of resuming.
func TestClosedThread(t *testing.T) {
	opts := envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}}
	wrote := watchWrites(&opts)
	e := newEnv(t, opts)
	th := e.rec.Thread("deleted")
	e.say(th, ann, "permission")
	e.waitOp(th, "the permission prompt", isPrompt)
	var first store.Binding
	e.storedOnce(wrote, func() string { return "no binding before the delete" }, func() bool {
		b, ok, err := e.st.Binding(e.ctx(), th)
		if err != nil {
			t.Fatal(err)
		}
		first = b
		return ok
	})
	e.say(th, bob, "echo queued")
	e.closeThread(th)
	e.waitAgent(th, "started")
	e.waitAgent(th, "stopped")
	if _, ok, err := e.st.Binding(e.ctx(), th); ok || err != nil {
		t.Errorf("the binding is still there after the delete (%v)", err)
	}
	if running, err := e.st.RunningTurns(e.ctx()); err != nil || len(running) != 0 {
		t.Errorf("running marks after the delete: %+v, %v; want none (the next start would tell a deleted thread)", running, err)
	}
	end := e.waitEndRaw(th)
	if end.StopReason != "cancelled" {
		t.Errorf("the deleted thread's turn ended %q, want cancelled", end.StopReason)
	}
	for _, m := range e.rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindText && strings.Contains(m.Text, "queued") {
			t.Error("a message queued in the deleted thread ran")
		}
	}

	// The same id again: a new session, not the deleted one resumed.
	e.say(th, ann, "echo again")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("a message after the delete: %+v", end)
	}
	again, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok || again.SessionID == first.SessionID {
		t.Errorf("after the delete the thread runs session %q (was %q), want a new one", again.SessionID, first.SessionID)
	}
}

// TestClosedThreadKillsADeafAgent: an agent that ignores the cancel is
// killed after abort.grace, and the delete completes.
func TestClosedThreadKillsADeafAgent(t *testing.T) {
	exe, _ := os.Executable()
	spec := agent.Spec{Name: "deaf", Command: []string{exe, "-test.run=^$"}, Env: []string{"SESSION_TEST_DEAF_AGENT=1", "GORACE=atexit_sleep_ms=0"}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true}, spec: &spec, grace: 200 * time.Millisecond})
	th := e.rec.Thread("deaf")
	e.say(th, ann, "work")
	e.waitOp(th, "text", hasText("working"))
	pid := e.waitSpawned()
	e.closeThread(th)
	if alive(pid) {
		t.Errorf("the deaf agent %d still runs after the delete", pid)
	}
	if _, ok, _ := e.st.Binding(e.ctx(), th); ok {
		t.Error("the binding is still there after the delete")
	}
}

// TestPickAgent: a new thread's first message may pick an agent of the
// thread's Policy.Agents; a bound thread keeps its agent; a name not
// offered is refused with the names that are, and nothing starts.
func TestPickAgent(t *testing.T) {
	dir := t.TempDir()
	p := session.DefaultPolicy()
	p.Agents = []string{"first", "second"}
	specs := map[string]agent.Spec{}
	for _, n := range []string{"first", "second", "hidden"} {
		s := demoSpec(dir + "/" + n)
		s.Name = n
		specs[n] = s
	}
	e := newEnv(t, envOptions{policy: &p, agents: func(name string) (agent.Spec, bool) {
		if name == "" {
			name = "first"
		}
		s, ok := specs[name]
		return s, ok
	}})
	agentOf := func(th channels.ThreadRef) string {
		t.Helper()
		b, ok, err := e.st.Binding(e.ctx(), th)
		if err != nil || !ok {
			t.Fatalf("binding of %v: %v, %v", th, ok, err)
		}
		return b.Agent
	}
	pick := func(th channels.ThreadRef, agent, text string) {
		t.Helper()
		if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Text: text, Agent: agent, ID: channels.MessageID(th.Thread + text), Reply: e.rec.ReplyFunc(th)}); err != nil {
			t.Fatal(err)
		}
	}
	picked := e.rec.Thread("picked")
	pick(picked, "second", "echo one")
	e.waitEnd(picked)
	pick(picked, "first", "echo two")
	e.waitEnd(picked)
	if got := agentOf(picked); got != "second" {
		t.Errorf("the thread that picked second runs %q", got)
	}
	for _, name := range []string{"hidden", "nobody"} {
		th := e.rec.Thread(name)
		pick(th, name, "echo three")
		op := e.waitOp(th, "the refusal", hasText("pick one of: first, second"))
		if !strings.Contains(op.Text, `"`+name+`"`) {
			t.Errorf("refusal %q does not name %q", op.Text, name)
		}
		if _, ok, _ := e.st.Binding(e.ctx(), th); ok {
			t.Errorf("a refused pick of %q started an agent", name)
		}
	}
}

// TestClosedThreadEndsItsAgentSession: a deleted thread's session is
// deleted and closed at the agent (both advertised by the demo agent):
// its saved state is gone, so nothing can load it again.
func TestClosedThreadEndsItsAgentSession(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "demo-state")
	spec := demoSpec(state)
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, dir: dir, spec: &spec})
	th := e.rec.Thread("ended")
	e.say(th, ann, "echo kept until deleted")
	e.waitEnd(th)
	b, _, _ := e.st.Binding(e.ctx(), th)
	if _, err := os.Stat(filepath.Join(state, b.SessionID+".json")); err != nil {
		t.Fatalf("the demo agent saved no state for the session: %v", err)
	}
	e.closeThread(th)
	e.waitAgent(th, "stopped")
	e.close()
	log := eventLog(t, dir, b.SessionID)
	del, cl := strings.Index(log, `"method":"session/delete"`), strings.Index(log, `"method":"session/close"`)
	if del < 0 || cl < del {
		t.Errorf("want session/delete then session/close in the event log:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(state, b.SessionID+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted thread's session is still saved by the agent (%v)", err)
	}
}

// TestDeletedChannelForgetsItsThreads: a channel the platform deleted
// (Closed, no thread, no author) drops each bound thread of it the
// gateway runs no owner for, from the store's bindings of that channel
// alone (Store.ChannelBindings); another channel's stay.
func TestDeletedChannelForgetsItsThreads(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	a, b := e.rec.Thread("a"), e.rec.Thread("b")
	kept := channels.ThreadRef{Platform: a.Platform, Channel: "c2", Thread: "a"}
	for _, th := range []channels.ThreadRef{a, b, kept} {
		if err := e.st.PutBinding(e.ctx(), store.Binding{Thread: th, Agent: "demo", SessionID: "s-" + th.Channel + th.Thread}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: channels.ThreadRef{Platform: a.Platform, Channel: a.Channel}, Closed: true}); err != nil {
		t.Fatal(err)
	}
	for _, th := range []channels.ThreadRef{a, b} {
		e.logs.waitFor(t, e.ctx(), `binding forgotten" thread.platform=`+th.Platform+" thread.channel="+th.Channel+" thread.thread="+th.Thread+" ")
		if _, ok, err := e.st.Binding(e.ctx(), th); ok || err != nil {
			t.Errorf("%s is still bound after its channel was deleted (%v)", th, err)
		}
	}
	if _, ok, err := e.st.Binding(e.ctx(), kept); !ok || err != nil {
		t.Errorf("a thread of another channel lost its binding (%v)", err)
	}
}
