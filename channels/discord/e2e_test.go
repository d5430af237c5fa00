package discord

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
)

// gateway is the session router with the Discord adapter against the fake,
// and the demo agent as a real subprocess.
type gateway struct {
	t    *testing.T
	f    *fakeDiscord
	a    *Adapter
	ends *sessiontest.TurnEnds
	dir  string // the gateway's files: the demo agent's state, the event logs
}

// newGateway starts the gateway with rule as Discord's access rule,
// wired as the program wires it (the adapter asks the router before a
// mention opens a thread).
func newGateway(t *testing.T, f *fakeDiscord, rule session.AccessRule) *gateway {
	t.Helper()
	return newGatewayWith(t, f, rule, Options{})
}

// newGatewayWith is newGateway with the adapter's options o (their Logger
// and Admit are the gateway's).
func newGatewayWith(t *testing.T, f *fakeDiscord, rule session.AccessRule, o Options) *gateway {
	t.Helper()
	return newGatewayAgent(t, f, rule, o, nil)
}

// newGatewayAgent is newGatewayWith whose agent is spec (nil: the demo
// agent).
func newGatewayAgent(t *testing.T, f *fakeDiscord, rule session.AccessRule, o Options, agentSpec *agent.Spec) *gateway {
	t.Helper()
	leaks := channeltest.LeakCheck(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	if agentSpec != nil {
		spec = *agentSpec
	}
	g := &gateway{t: t, f: f, ends: sessiontest.NewTurnEnds(), dir: dir}
	var log *slog.Logger
	sdk := testlog.FailOnSDKError(t) // for the agents: an ACP SDK error fails the test
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		sdk = slog.New(slog.NewMultiHandler(log.Handler(), sdk.Handler()))
	}
	var r *session.Router
	o.Logger, o.Admit = log, func(ctx context.Context, in channels.Inbound) bool { return r.Admit(ctx, in) }
	g.a = f.adapter(t, o)
	r = session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Access:      map[string]session.AccessRule{Platform: rule},
		Logger:      sdk,
		OnTurnEnd:   g.ends.Record,
	})
	r.Add(Platform, g.a)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := g.a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the gateway did not shut down within 30 s")
		}
		st.Close()
		leaks()
		if v := f.Violations(); len(v) > 0 {
			t.Errorf("fake discord saw protocol misuse: %q", v)
		}
	})
	f.waitLive(testCtx(t))
	return g
}

// waitEnd waits for the end of the next turn in th and returns its stop
// reason.
func (g *gateway) waitEnd(th channels.ThreadRef) string {
	g.t.Helper()
	end, ok := g.ends.Next(testCtx(g.t), th)
	if !ok {
		g.t.Fatalf("no turn end in %v; messages:\n%s", th, g.dump(th.Thread))
	}
	return end.StopReason
}

// dump lists the bot's messages in channel, for failure messages.
func (g *gateway) dump(channel string) string {
	var b strings.Builder
	for _, m := range g.f.botMessages(channel) {
		b.WriteString("--- " + m.ID + "\n" + m.Content + "\n")
	}
	return b.String()
}

// since returns the bot's messages in channel posted after the first n.
func (g *gateway) since(channel string, n int) []fakeMessage {
	ms := g.f.botMessages(channel)
	if n > len(ms) {
		return nil
	}
	return ms[n:]
}

// words is the text of the demo agent's "slow n".
func words(n int) string {
	lorem := strings.Fields("the quick brown fox jumps over the lazy dog while a patient " +
		"agent streams one word at a time so that cancel has something to stop")
	var out []string
	for i := range n {
		out = append(out, lorem[i%len(lorem)])
	}
	return strings.Join(out, " ")
}

// answerText joins the messages that hold the agent's answer (not gateway
// notices, tools or prompts), in order.
func answerText(ms []fakeMessage) string {
	var parts []string
	for _, m := range ms {
		if strings.HasPrefix(m.Content, "⚙") || m.Components != nil {
			continue
		}
		parts = append(parts, m.Content)
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// TestEndToEnd is what a conversation on Discord has beyond the suite's
// (e2e.Run's Conversation): the thread a mention opens is named after the
// prompt; a tool's message is edited in place as the tool runs; 429s on
// edits are absorbed; the gateway connection drops or Discord asks for a
// reconnect, and the client resumes.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Approvers: []string{ann.ID}})
	ctx := testCtx(t)

	id := f.say(ann, f.channel, "slow 40", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if c, ok := f.channelCopy(id); !ok || c.Name != "slow 40" {
		t.Fatalf("thread = %+v, want one named after the prompt", c)
	}

	// Tools: one message per tool call, edited in place.
	n := len(f.botMessages(id))
	f.say(ann, id, "tools", false)
	g.waitEnd(th)
	var tool *fakeMessage
	for _, m := range g.since(id, n) {
		if strings.Contains(m.Content, "ls -la") {
			tool = &m
		}
	}
	if tool == nil || tool.Edits == 0 {
		t.Errorf("no tool message for ls -la edited in place:\n%s", g.dump(id))
	} else {
		t.Logf("tool message history: %q", tool.History)
	}

	// 429s on edits are absorbed: nothing lost or reordered.
	n = len(f.botMessages(id))
	limited := `{"message": "You are being rate limited.", "retry_after": 0.3, "global": false}`
	f.inject("PATCH", "/channels/"+id+"/messages/", 3, 429, limited, nil)
	f.say(ann, id, "slow 60", false)
	g.waitEnd(th)
	if got, want := answerText(g.since(id, n)), words(60); got != want {
		t.Errorf("answer with 429s = %q, want %q\n%s", got, want, g.dump(id))
	}
	f.mu.Lock()
	left := f.injections[len(f.injections)-1].n
	f.mu.Unlock()
	if left != 0 {
		t.Errorf("%d injected 429s were not met; the test proves nothing", left)
	}

	// The gateway connection drops, then Discord asks for a reconnect:
	// the client resumes, and the thread goes on.
	for _, disrupt := range []struct {
		name string
		do   func()
	}{{"dropped", f.dropConnection}, {"reconnect", f.askReconnect}} {
		f.waitLive(ctx)
		n = len(f.botMessages(id))
		disrupt.do()
		f.say(ann, id, "echo after "+disrupt.name, false)
		g.waitEnd(th)
		if got := answerText(g.since(id, n)); got != "after "+disrupt.name {
			t.Errorf("answer after %s = %q", disrupt.name, got)
		}
	}
	if ids, res := f.gatewayCounts(); ids != 1 || res != 2 {
		t.Errorf("identifies, resumes = %d, %d; want 1, 2", ids, res)
	}
}

// customIDWithSuffix returns the custom_id of the prompt's button whose id
// ends in suffix.
func customIDWithSuffix(t *testing.T, m fakeMessage, suffix string) string {
	t.Helper()
	var rows []struct {
		Components []struct {
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	if err := json.Unmarshal(m.Components, &rows); err != nil {
		t.Fatalf("components %s: %v", m.Components, err)
	}
	for _, r := range rows {
		for _, b := range r.Components {
			if strings.HasSuffix(b.CustomID, suffix) {
				return b.CustomID
			}
		}
	}
	t.Fatalf("no button ending in %q in %s", suffix, m.Components)
	return ""
}

// A mention from someone without access opens no thread: the refusal
// answers their message in the channel, once, and someone with access
// still gets a thread.
func TestMentionWithoutAccessOpensNoThread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Users: []string{ann.ID}})
	ctx := testCtx(t)
	threads := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		n := 0
		for _, c := range f.chans {
			if c.Type == 11 {
				n++
			}
		}
		return n
	}
	before := threads()

	first := f.say(bob, f.channel, "run the deploy", true)
	var reply fakeMessage
	f.waitFor(ctx, "a refusal in the channel", func() bool {
		for _, m := range f.botMessagesLocked(f.channel) {
			if m.ReplyTo == first {
				reply = m
				return true
			}
		}
		return false
	})
	if !strings.Contains(reply.Content, "don't have access") {
		t.Errorf("refusal = %q", reply.Content)
	}
	f.say(bob, f.channel, "run it now", true) // told once an hour, not again

	id := f.say(ann, f.channel, "hello", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("Ann's turn ended with %q", got)
	}
	if n := threads(); n != before+1 {
		t.Errorf("%d threads opened, want only Ann's", n-before)
	}
	if _, ok := f.channelCopy(first); ok {
		t.Errorf("Bob's mention opened a thread")
	}
	var refusals int
	for _, m := range f.botMessages(f.channel) {
		if m.ReplyTo != "" {
			refusals++
		}
	}
	if refusals != 1 {
		t.Errorf("%d refusals in the channel, want 1:\n%s", refusals, g.dump(f.channel))
	}
}
