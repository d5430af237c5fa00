package slack

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest/e2e"
	"github.com/acpgw/gateway/session"
)

// TestE2E runs the end-to-end suite every platform passes against the
// fake Slack.
func TestE2E(t *testing.T) {
	e2e.Run(t, demoAgentEnv, func(t *testing.T) e2e.Driver { return newDriver(t, fakeOptions{}) })
}

// driver is the suite's hands and eyes on the fake Slack.
type driver struct{ f *fakeSlack }

var _ e2e.Driver = driver{}

func newDriver(t *testing.T, o fakeOptions) driver {
	f := newFake(t, o)
	f.addUser(ann, "Ann")
	f.addUser(bob, "Bob")
	return driver{f}
}

func person(p e2e.Person) string {
	if p == e2e.Ann {
		return ann
	}
	return bob
}

func (d driver) Platform() string { return Platform }

// Adapter is the adapter with history reads unpaced, each of the app's
// posts a message of its own.
func (d driver) Adapter(t *testing.T, w e2e.Wiring) channels.Adapter {
	a := d.f.adapter(t, Options{KnownThread: w.Known, Logger: w.Logger, HistoryInterval: -1, Streaming: StreamingEdits})
	if _, err := a.Detect(t.Context()); err != nil {
		t.Fatal(err)
	}
	return a
}

func (d driver) Connected(t *testing.T, ctx context.Context) {
	if _, err := d.f.connected(ctx); err != nil {
		t.Fatal(err)
	}
}

func (d driver) Access(r session.AccessRule) session.AccessRule {
	r.Workspaces = []string{d.f.team}
	return r
}

func (d driver) UserID(p e2e.Person) string { return person(p) }

func (d driver) Mention(t *testing.T, ctx context.Context, who e2e.Person, text string) channels.ThreadRef {
	return ref(fakeChannel, d.f.mustSay(ctx, sayOptions{user: person(who), text: text, mention: true}).ts)
}

func (d driver) Say(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, text string) channels.MessageID {
	return channels.MessageID(d.f.mustSay(ctx, sayOptions{user: person(who), channel: th.Channel, thread: th.Thread, text: text}).ts)
}

func (d driver) SayWhileDown(t *testing.T, who e2e.Person, th channels.ThreadRef, text string) {
	d.f.sayWhileDown(person(who), th.Thread, text)
}

func (d driver) Messages(th channels.ThreadRef) []e2e.Message {
	var out []e2e.Message
	for _, m := range d.f.thread(th.Channel, th.Thread) {
		var files []string
		for _, f := range m.Files {
			files = append(files, string(f.Body))
		}
		out = append(out, e2e.Message{ID: channels.MessageID(m.TS), Text: unescape(m.Text), Chars: utf8.RuneCountInString(m.Text),
			Controls: m.Blocks != nil, Files: files})
	}
	return out
}

func (d driver) Changed() <-chan struct{} {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return d.f.changed
}

// Click's Reply reads the next private message to who in th.
func (d driver) Click(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, m e2e.Message, suffix string) e2e.Reply {
	t.Helper()
	fm, ok := d.f.message(th.Channel, string(m.ID))
	if !ok {
		t.Fatalf("no message %s to click", m.ID)
	}
	reply := d.privateReply(t, ctx, who, th)
	if _, err := d.f.click(ctx, person(who), th.Channel, fm.TS, button(t, fm, suffix)); err != nil {
		t.Fatal(err)
	}
	return reply
}

// Edits counts the chat.update calls of message id.
func (d driver) Edits(_ channels.ThreadRef, id channels.MessageID) int {
	n := 0
	for _, c := range d.f.callsTo("chat.update") {
		if c.Form.Get("ts") == string(id) {
			n++
		}
	}
	return n
}

func (d driver) React(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, msg channels.MessageID, emoji string) {
	name, err := slackEmoji(emoji)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.f.react(ctx, person(who), th.Channel, string(msg), name, false); err != nil {
		t.Fatal(err)
	}
}

func (d driver) Reactions(th channels.ThreadRef, msg channels.MessageID) []string {
	var out []string
	for _, name := range d.f.reactionsOn(th.Channel, string(msg)) {
		out = append(out, firstNonEmpty(emojiOf[name], name))
	}
	return out
}

// HistoryReads counts th's conversations.replies calls.
func (d driver) HistoryReads(th channels.ThreadRef) int {
	n := 0
	for _, c := range d.f.callsTo("conversations.replies") {
		if c.Form.Get("channel") == th.Channel && c.Form.Get("ts") == th.Thread {
			n++
		}
	}
	return n
}

// DeleteThread deletes th's root message, which has no replies.
func (d driver) DeleteThread(t *testing.T, ctx context.Context, th channels.ThreadRef) {
	if err := d.f.deleteMessage(ctx, th.Channel, th.Thread, false); err != nil {
		t.Fatal(err)
	}
}

func (d driver) DeleteChannel(t *testing.T, ctx context.Context, channel string) {
	if err := d.f.channelEvent(ctx, "channel_deleted", channel); err != nil {
		t.Fatal(err)
	}
}

// store keeps a message the fake shows in history, delivering no event:
// no app runs yet. Slack dates a message by its ts, not at will.
func (d driver) store(user, botID, thread, text string) string {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	ts := d.f.newTSLocked()
	d.f.msgs[fakeChannel+"/"+ts] = &fakeMessage{Channel: fakeChannel, TS: ts, ThreadTS: thread, Text: text, User: user, BotID: botID}
	d.f.notifyLocked()
	return ts
}

func (d driver) Started(t *testing.T, who e2e.Person, text string, _ time.Time) (channels.ThreadRef, time.Time) {
	ts := d.store(person(who), "", "", text)
	return ref(fakeChannel, ts), tsTime(ts)
}

func (d driver) Said(t *testing.T, who *e2e.Person, th channels.ThreadRef, text string, _ time.Time) time.Time {
	if who == nil {
		return tsTime(d.store("", otherBot, th.Thread, text))
	}
	return tsTime(d.store(person(*who), "", th.Thread, text))
}

func (d driver) Dated(_ channels.ThreadRef, id channels.MessageID, _ time.Time) time.Time {
	return tsTime(string(id))
}

func (d driver) MentionIn(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, text string) time.Time {
	return tsTime(d.f.mustSay(ctx, sayOptions{user: person(who), channel: th.Channel, thread: th.Thread, text: text, mention: true}).ts)
}

// Refusals counts the private messages to who in th.
func (d driver) Refusals(who e2e.Person, th channels.ThreadRef) int {
	n := 0
	for _, e := range d.f.ephemeralsTo(person(who)) {
		if e.Channel == th.Channel && e.ThreadTS == th.Thread {
			n++
		}
	}
	return n
}

// otherBot is the bot id of another app's messages.
const otherBot = "B0CI"

func (d driver) Names() (self, other string) { return d.f.botUser, otherBot }
