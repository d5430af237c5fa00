package session_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// historyAdapter is the recording adapter with a thread's history to
// read (channels.History), counting the reads.
type historyAdapter struct {
	channels.Adapter
	mu    sync.Mutex
	msgs  []channels.Inbound
	reads int
}

// MessagesAfter pages through msgs, two at a time.
func (h *historyAdapter) MessagesAfter(_ context.Context, t channels.ThreadRef, after channels.MessageID, _ int) (channels.Page, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads++
	i := 0
	if after != "" {
		for i < len(h.msgs) && h.msgs[i].ID != after {
			i++
		}
		i++
	}
	end := min(i+2, len(h.msgs))
	if i >= end {
		return channels.Page{}, nil
	}
	page := channels.Page{Messages: h.msgs[i:end], Last: h.msgs[end-1].ID, More: end < len(h.msgs)}
	for j := range page.Messages {
		page.Messages[j].Thread = t
	}
	return page, nil
}

func (h *historyAdapter) readCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reads
}

// firstPrompt returns the prompt the agent was sent first in th, from
// the session's transcript.
func firstPrompt(t *testing.T, e *env, th channels.ThreadRef) string {
	t.Helper()
	b, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok {
		t.Fatalf("binding of %s: %v %v", th, ok, err)
	}
	entries, err := e.st.Entries(e.ctx(), b.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if m, ok := en.Body.(store.Message); ok && m.Role == store.RoleUser {
			return m.Text
		}
	}
	t.Fatalf("no prompt in the transcript of %s", th)
	return ""
}

var at = time.Date(2026, 11, 25, 20, 10, 0, 0, time.UTC)

// TestBackfill: mentioned in a thread not bound yet, the agent's first
// prompt starts with what was said there before, quoted with authors and
// times, bots marked, within context.backfill; later prompts do not, and
// nothing is read for a person without access.
func TestBackfill(t *testing.T) {
	rules := map[string]session.AccessRule{"web": {Users: []string{ann.ID}}}
	policy := session.DefaultPolicy()
	policy.Context.Backfill = session.Backfill{Messages: 3, Chars: 8000}
	h := &historyAdapter{msgs: []channels.Inbound{
		{ID: "m1", Author: bob, Text: "too old to be read", Time: at},
		{ID: "m2", Author: bob, Text: "the build fails on main\nsince this morning", Time: at.Add(time.Minute)},
		{ID: "m3", Author: channels.Author{ID: "ci", Name: "CI", Bot: true}, Text: "build #12 failed", Time: at.Add(2 * time.Minute)},
		{ID: "m4", Author: bob, Text: "any idea?", Time: at.Add(3 * time.Minute)},
		{ID: "in-hello", Author: ann, Text: "hello", Time: at.Add(4 * time.Minute)},
		{ID: "m6", Author: bob, Text: "said after the mention"},
	}}
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	h.Adapter = rec.Adapter()
	e := newEnv(t, envOptions{recorder: rec, adapter: h, access: rules, policy: &policy})
	th := e.rec.Thread("a")

	e.say(th, bob, "hello from someone without access")
	e.waitOp(th, "the refusal", func(op channeltest.Op) bool { return true })
	if n := h.readCount(); n != 0 {
		t.Errorf("%d reads for a person without access", n)
	}

	e.say(th, ann, "hello")
	e.waitEnd(th)
	got := firstPrompt(t, e, th)
	want := "Earlier messages in this thread, for context (oldest first; older ones left out):\n" +
		"> Bob, 2026-11-25 20:11 UTC:\n> the build fails on main\n> since this morning\n" +
		"> CI (bot), 2026-11-25 20:12 UTC:\n> build #12 failed\n" +
		"> Bob, 2026-11-25 20:13 UTC:\n> any idea?\n" +
		"\nhello"
	if got != want {
		t.Errorf("first prompt:\n%s\nwant:\n%s", got, want)
	}
	reads := h.readCount()
	e.say(th, ann, "echo again")
	e.waitEnd(th)
	if n := h.readCount(); n != reads {
		t.Errorf("a bound thread was read again (%d reads, then %d)", reads, n)
	}
	if strings.Contains(e.text(th), "Earlier messages") {
		t.Errorf("the context was shown in the thread: %q", e.text(th))
	}

	// A message that starts its thread (the thread made for a mention)
	// has nothing before it: nothing is read.
	reads = h.readCount()
	started := e.rec.Thread("in-start")
	e.say(started, ann, "start")
	e.waitEnd(started)
	if n := h.readCount(); n != reads {
		t.Errorf("the history of a thread its message started was read (%d reads, then %d)", reads, n)
	}
	if got := firstPrompt(t, e, started); got != "start" {
		t.Errorf("first prompt = %q, want \"start\"", got)
	}
}
