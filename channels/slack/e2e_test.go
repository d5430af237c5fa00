package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
)

// gateway is the real session router with the Slack adapter, the fake
// Slack behind it, and the demo agent as a subprocess.
type gateway struct {
	t    *testing.T
	f    *fakeSlack
	a    *Adapter
	st   *store.Store
	ends *sessiontest.TurnEnds
	dir  string // the gateway's files: the demo agent's state, the event logs
}

const (
	ann = "U0ANN" // an approver
	bob = "U0BOB" // may prompt, may not approve
)

func newGateway(t *testing.T, o ...fakeOptions) *gateway {
	t.Helper()
	return newGatewayWith(t, gatewayOptions{}, o...)
}

// gatewayOptions change newGateway's defaults.
type gatewayOptions struct {
	// rule gives Slack's access rule for the fake's workspace; nil:
	// everyone there, Ann approves.
	rule func(team string) session.AccessRule
	// adapter is the adapter's options (KnownThread is the gateway's).
	adapter Options
}

// newGatewayWith is newGateway with the options opt.
func newGatewayWith(t *testing.T, opt gatewayOptions, o ...fakeOptions) *gateway {
	t.Helper()
	dir := t.TempDir()
	f := newFake(t, append(o, fakeOptions{})[0])
	rule := opt.rule
	if rule == nil {
		rule = func(team string) session.AccessRule {
			return session.AccessRule{Workspaces: []string{team}, Approvers: []string{ann}}
		}
	}
	leaks := channeltest.LeakCheck(t) // the fake's server stops after the check
	f.addUser(ann, "Ann")
	f.addUser(bob, "Bob")
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ao := opt.adapter
	ao.KnownThread = func(ctx context.Context, th channels.ThreadRef) bool {
		_, ok, err := st.Binding(ctx, th)
		return ok && err == nil
	}
	a := f.adapter(t, ao)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, f: f, a: a, st: st, ends: sessiontest.NewTurnEnds(), dir: dir}
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	r := session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Access:      map[string]session.AccessRule{Platform: rule(f.team)},
		Abort:       abort.DefaultConfig(),
		Logger:      testlog.FailOnSDKError(t), // an ACP SDK error fails the test
		OnTurnEnd:   g.ends.Record,
	})
	r.Add(Platform, a)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	wg.Go(func() { _ = r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the gateway did not stop within 30 s")
		}
		st.Close()
		leaks()
	})
	return g
}

func (g *gateway) ctx() context.Context {
	ctx, cancel := context.WithTimeout(g.t.Context(), 30*time.Second)
	g.t.Cleanup(cancel)
	return ctx
}

// waitEnd waits for the next turn end in th.
func (g *gateway) waitEnd(th channels.ThreadRef) projector.TurnEnd {
	g.t.Helper()
	end, ok := g.ends.Next(g.ctx(), th)
	if !ok {
		g.t.Fatalf("no turn end in %v; thread:\n%s", th, g.dump(th))
	}
	return end
}

// say has user write text in thread (top-level with a mention when
// thread is "").
func (g *gateway) say(user, thread, text string, mention bool) sent {
	g.t.Helper()
	return g.f.mustSay(g.ctx(), sayOptions{user: user, thread: thread, text: text, mention: mention})
}

// messages returns the app's messages in th, oldest first.
func (g *gateway) messages(th channels.ThreadRef) []fakeMessage {
	return g.f.thread(th.Channel, th.Thread)
}

// dump renders the app's messages in th, for failure messages.
func (g *gateway) dump(th channels.ThreadRef) string {
	var b strings.Builder
	for _, m := range g.messages(th) {
		b.WriteString("[" + m.TS + "] " + m.Text + "\n")
	}
	return b.String()
}

// mark returns the ts of the newest message in th, for waitMessage.
func (g *gateway) mark(th channels.ThreadRef) string {
	ms := g.messages(th)
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1].TS
}

// waitMessage waits for an app message in th newer than since whose text
// contains sub.
func (g *gateway) waitMessage(th channels.ThreadRef, since, sub string) fakeMessage {
	g.t.Helper()
	var found fakeMessage
	err := g.f.waitFor(g.ctx(), "a message with "+sub, func() bool {
		for _, m := range g.f.msgs {
			if m.Channel == th.Channel && m.ThreadTS == th.Thread && m.BotID == g.f.botID && m.TS > since && strings.Contains(m.Text, sub) {
				found = *m
				return true
			}
		}
		return false
	})
	if err != nil {
		g.t.Fatalf("%v; thread:\n%s", err, g.dump(th))
	}
	return found
}

// updates returns the chat.update calls of message ts.
func (g *gateway) updates(ts string) []apiCall {
	var out []apiCall
	for _, c := range g.f.callsTo("chat.update") {
		if c.Form.Get("ts") == ts {
			out = append(out, c)
		}
	}
	return out
}

// slowWords is the text of the demo agent's "slow n".
func slowWords(n int) string {
	words := strings.Fields("the quick brown fox jumps over the lazy dog while a patient " +
		"agent streams one word at a time so that cancel has something to stop")
	var b strings.Builder
	for i := range n {
		b.WriteString(words[i%len(words)] + " ")
	}
	return b.String()
}

// TestEndToEnd is what a conversation on Slack has beyond the suite's
// (e2e.Run's Conversation): the first answer is one message, streamed
// with chat.update, under a status line set while the turn runs; an
// answered prompt loses its button; a redelivered event runs once; rate
// limits on posts and edits are absorbed; the client reconnects when
// Slack asks it to or the connection drops.
func TestEndToEnd(t *testing.T) {
	g := newGateway(t)
	f := g.f

	// A mention in a channel starts a thread; the answer streams into it.
	s := g.say(ann, "", "slow 30", true)
	th := ref(fakeChannel, s.ts)
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("first turn ended %+v", end)
	}
	msgs := g.messages(th)
	if len(msgs) != 1 || msgs[0].Text != strings.TrimSpace(slowWords(30)) {
		t.Fatalf("thread after the first turn:\n%s\nwant one message with the streamed words", g.dump(th))
	}
	if n := len(g.updates(msgs[0].TS)); n == 0 {
		t.Error("the answer was not streamed: no chat.update of its message")
	}
	// The status line is set while the turn runs and cleared after it.
	err := f.waitFor(g.ctx(), "the status line cleared", func() bool { return !f.statusShownLocked(th.Channel, th.Thread) })
	if err != nil {
		t.Error(err)
	}
	if calls := statusCalls(f, th); len(calls) < 2 || calls[0] != statusText || calls[len(calls)-1] != "" {
		t.Errorf("status line calls %q, want it set while the turn ran and cleared at its end", calls)
	}

	// Once a prompt is answered, its button is gone.
	since := g.mark(th)
	g.say(ann, s.ts, "permission", false)
	prompt := g.waitMessage(th, since, "Permission needed")
	allow := button(t, prompt, "/allow_once")
	if _, err := f.click(g.ctx(), ann, th.Channel, prompt.TS, allow); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("permission turn ended %+v", end)
	}
	if _, err := f.click(g.ctx(), ann, th.Channel, prompt.TS, allow); err == nil {
		t.Error("the answered prompt still has its button")
	}

	// A redelivered event runs once: Slack retries with the same event id.
	once := g.say(ann, s.ts, "echo run me once", false)
	for _, env := range once.raw {
		f.mustRedeliver(g.ctx(), env, 1)
	}
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("echo turn ended %+v", end)
	}
	g.say(ann, s.ts, "echo after the retry", false)
	g.waitEnd(th)
	if n := count(g.messages(th), "run me once"); n != 1 {
		t.Errorf("%d answers to a redelivered message, want 1; thread:\n%s", n, g.dump(th))
	}

	// Rate limits are absorbed: posts and edits answered 429 (with and
	// without Retry-After) are delivered later, nothing lost or reordered.
	before := len(g.messages(th))
	f.failNext("chat.update",
		failure{status: http.StatusTooManyRequests, retryAfter: "1"},
		failure{status: http.StatusTooManyRequests},
		failure{slackErr: "ratelimited"})
	g.say(ann, s.ts, "slow 40", false)
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("slow turn under edit rate limits ended %+v", end)
	}
	if got := g.messages(th)[before:]; len(got) != 1 || got[0].Text != strings.TrimSpace(slowWords(40)) {
		t.Errorf("streamed answer under edit rate limits:\n%s\nwant one message with 40 words", g.dump(th))
	}
	var long strings.Builder
	for i := range 900 {
		fmt.Fprintf(&long, "w%04d ", i) // 5,400 characters: two messages
	}
	before = len(g.messages(th))
	f.failNext("chat.postMessage",
		failure{status: http.StatusTooManyRequests, retryAfter: "1"},
		failure{status: http.StatusTooManyRequests},
		failure{status: http.StatusTooManyRequests, retryAfter: "1"})
	g.say(ann, s.ts, "echo "+long.String(), false)
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("echo turn under post rate limits ended %+v", end)
	}
	// Dispatch trims the space at the break between the two messages.
	var echoed []string
	for _, m := range g.messages(th)[before:] {
		echoed = append(echoed, strings.Fields(m.Text)...)
	}
	if diff := cmp.Diff(strings.Fields(long.String()), echoed); diff != "" {
		t.Errorf("echo under post rate limits, words (-want +got):\n%s", diff)
	}
	if n := len(g.messages(th)[before:]); n < 2 {
		t.Errorf("a 5,400-character answer came as %d message(s), want it split", n)
	}

	// Slack asks the client to reconnect, then the connection drops: the
	// client reconnects each time and the session goes on.
	b1, _, err := g.st.Binding(g.ctx(), th)
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"disconnect", "drop"} {
		opens := f.openCount()
		f.mu.Lock()
		old := f.conn
		f.mu.Unlock()
		if how == "disconnect" {
			if err := f.disconnect(g.ctx()); err != nil {
				t.Fatal(err)
			}
		} else {
			f.drop()
		}
		if err := f.waitFor(g.ctx(), "a new connection", func() bool { return f.opens > opens && f.conn != nil && f.conn != old }); err != nil {
			t.Fatal(err)
		}
		since := g.mark(th)
		g.say(bob, s.ts, "echo still here after "+how, false)
		if end := g.waitEnd(th); end.StopReason != "end_turn" {
			t.Fatalf("turn after %s ended %+v", how, end)
		}
		g.waitMessage(th, since, "still here after "+how)
	}
	b2, _, err := g.st.Binding(g.ctx(), th)
	if err != nil {
		t.Fatal(err)
	}
	if b1.SessionID == "" || b2.SessionID != b1.SessionID {
		t.Errorf("session after reconnects = %q, want the same as before (%q)", b2.SessionID, b1.SessionID)
	}
}

// count returns how many messages contain sub.
func count(ms []fakeMessage, sub string) int {
	n := 0
	for _, m := range ms {
		if strings.Contains(m.Text, sub) {
			n++
		}
	}
	return n
}

// statusCalls returns the statuses set in th, in order.
func statusCalls(f *fakeSlack, th channels.ThreadRef) []string {
	var out []string
	for _, c := range f.callsTo("assistant.threads.setStatus") {
		if c.Form.Get("channel_id") == th.Channel && c.Form.Get("thread_ts") == th.Thread {
			out = append(out, c.Form.Get("status"))
		}
	}
	return out
}

// button returns the value of the prompt's button whose value ends with
// suffix.
func button(t *testing.T, m fakeMessage, suffix string) string {
	t.Helper()
	var blocks []block
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatalf("prompt blocks %s: %v", m.Blocks, err)
	}
	for _, b := range blocks {
		for _, e := range b.Elements {
			if strings.HasSuffix(e.Value, suffix) {
				return e.Value
			}
		}
	}
	t.Fatalf("prompt has no button ending with %s: %s", suffix, m.Blocks)
	return ""
}
