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
)

// historied is a channel that kept what its threads received while the
// gateway was down.
type historied struct {
	channels.Adapter
	mu      sync.Mutex // guards the fields below
	backlog map[channels.ThreadRef][]channels.Inbound
	after   map[channels.ThreadRef]channels.MessageID // what the reads asked for
}

func (h *historied) MessagesAfter(_ context.Context, t channels.ThreadRef, after channels.MessageID, _ int) (channels.Page, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.after[t] = after
	ms := h.backlog[t]
	delete(h.backlog, t)
	p := channels.Page{Messages: ms}
	if len(ms) > 0 {
		p.Last = ms[len(ms)-1].ID
	}
	return p, nil
}

// A stop in the backlog cancels the messages before it, as it would have
// dropped them from the queue; it stops nothing that runs after the
// restart, and what comes after it is answered.
func TestCatchUpStopInBacklog(t *testing.T) {
	cu := session.CatchUp{Window: time.Hour}
	dir := t.TempDir()
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	th := rec.Thread("down")
	first := newEnv(t, envOptions{recorder: rec, dir: dir, catchUp: cu})
	first.say(th, ann, "echo before")
	first.waitEnd(th)
	first.close()

	msg := func(text string) channels.Inbound {
		return channels.Inbound{Thread: th, Author: ann, Text: text, ID: channels.MessageID("down-" + text)}
	}
	h := &historied{Adapter: rec.Adapter(), after: map[channels.ThreadRef]channels.MessageID{},
		backlog: map[channels.ThreadRef][]channels.Inbound{th: {msg("echo one"), msg("echo two"), msg("stop"), msg("echo three")}}}
	second := newEnv(t, envOptions{recorder: rec, dir: dir, adapter: h, catchUp: cu})
	if end := second.waitEnd(th); end.StopReason != "end_turn" {
		t.Errorf("turn after the restart ended %q, want end_turn (the stop was before it)", end.StopReason)
	}
	second.say(th, ann, "echo after")
	second.waitEnd(th)
	if got, want := second.text(th), "beforethreeafter"; got != want {
		t.Errorf("answers = %q, want %q", got, want)
	}
	h.mu.Lock()
	after := h.after[th]
	h.mu.Unlock()
	if after != "in-echo before" {
		t.Errorf("the backlog was read after %q, want after the last message seen, \"in-echo before\"", after)
	}
	for _, m := range rec.Messages() {
		if m.Thread == th && (strings.Contains(m.Text, "Stopped") || strings.Contains(m.Text, "Nothing is running")) {
			t.Errorf("the stop in the backlog was acted on: %q", m.Text)
		}
	}
}

// A /stop command in the backlog (as an adapter's history delivers it)
// cancels the messages before it like a stop word, with stop words off.
func TestCatchUpStopCommandInBacklog(t *testing.T) {
	cu := session.CatchUp{Window: time.Hour}
	dir := t.TempDir()
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	th := rec.Thread("down-cmd")
	first := newEnv(t, envOptions{recorder: rec, dir: dir, catchUp: cu, noWords: true})
	first.say(th, ann, "echo before")
	first.waitEnd(th)
	first.close()

	msg := func(text string) channels.Inbound {
		return channels.Inbound{Thread: th, Author: ann, Text: text, Command: channels.ParseCommand(text), ID: channels.MessageID("down-" + text)}
	}
	h := &historied{Adapter: rec.Adapter(), after: map[channels.ThreadRef]channels.MessageID{},
		backlog: map[channels.ThreadRef][]channels.Inbound{th: {msg("echo one"), msg("/stop"), msg("echo three")}}}
	second := newEnv(t, envOptions{recorder: rec, dir: dir, adapter: h, catchUp: cu, noWords: true})
	second.waitEnd(th)
	second.say(th, ann, "echo after")
	second.waitEnd(th)
	if got, want := second.text(th), "beforethreeafter"; got != want {
		t.Errorf("answers = %q, want %q (the /stop dropped \"echo one\")", got, want)
	}
	for _, m := range rec.Messages() {
		if m.Thread == th && (strings.Contains(m.Text, "Stopped") || strings.Contains(m.Text, "Nothing")) {
			t.Errorf("the /stop in the backlog was acted on live: %q", m.Text)
		}
	}
}

// TestReactionIsNotTheLastMessageSeen: reaction events carry an id of
// their own (for de-duplication), which is no message of the thread: the
// catch-up must not read on from it.
func TestReactionIsNotTheLastMessageSeen(t *testing.T) {
	e := newEnv(t, envOptions{catchUp: session.CatchUp{Window: time.Hour}})
	th := e.rec.Thread("seen")
	e.say(th, ann, "echo before")
	e.waitEnd(th)
	for _, r := range []channels.Reaction{{Message: "in-echo before", Emoji: "👍"}, {Message: "in-echo before", Emoji: channels.ReactStop}} {
		in := channels.Inbound{Thread: th, Author: ann, Reaction: &r, ID: channels.MessageID("Ev-" + r.Emoji)}
		if err := e.rec.Deliver(e.ctx(), in); err != nil {
			t.Fatal(err)
		}
	}
	seen, err := e.st.SeenSince(e.ctx(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].MessageID != "in-echo before" {
		t.Errorf("last seen = %+v, want the message \"in-echo before\"", seen)
	}
}

// The gateway's own messages in the backlog (History returns them marked
// Author.Self, for a thread's context) are never run, not even where
// bots may prompt, and a stop among them stops nothing.
func TestCatchUpSkipsOwnMessages(t *testing.T) {
	cu := session.CatchUp{Window: time.Hour}
	dir := t.TempDir()
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	th := rec.Thread("down-own")
	gw := channels.Author{ID: "u-gateway", Name: "gateway", Bot: true, Self: true}
	access := map[string]session.AccessRule{"web": {Users: []string{ann.ID, gw.ID}, AllowBots: true}}
	first := newEnv(t, envOptions{recorder: rec, dir: dir, catchUp: cu, access: access})
	first.say(th, ann, "echo before")
	first.waitEnd(th)
	first.close()

	msg := func(who channels.Author, text string) channels.Inbound {
		return channels.Inbound{Thread: th, Author: who, Text: text, ID: channels.MessageID("down-" + text)}
	}
	h := &historied{Adapter: rec.Adapter(), after: map[channels.ThreadRef]channels.MessageID{},
		backlog: map[channels.ThreadRef][]channels.Inbound{th: {msg(ann, "echo one"), msg(gw, "echo own"), msg(gw, "stop"), msg(ann, "echo two")}}}
	second := newEnv(t, envOptions{recorder: rec, dir: dir, adapter: h, catchUp: cu, access: access})
	second.waitEnd(th) // one
	second.waitEnd(th) // two
	second.say(th, ann, "echo after")
	second.waitEnd(th)
	if got, want := second.text(th), "beforeonetwoafter"; got != want {
		t.Errorf("answers = %q, want %q (the gateway's own messages left out)", got, want)
	}
}
