package discord

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest/e2e"
	"github.com/acpgw/gateway/session"
)

// TestE2E runs the end-to-end suite every platform passes against the
// fake Discord.
func TestE2E(t *testing.T) {
	e2e.Run(t, demoAgentEnv, func(t *testing.T) e2e.Driver { return newDriver(t) })
}

// driver is the suite's hands and eyes on the fake Discord.
type driver struct{ f *fakeDiscord }

var _ e2e.Driver = driver{}

func newDriver(t *testing.T) driver {
	f := newFake(t)
	t.Cleanup(func() {
		if v := f.Violations(); len(v) > 0 {
			t.Errorf("fake discord saw protocol misuse: %q", v)
		}
	})
	return driver{f}
}

func person(p e2e.Person) fakeUser {
	if p == e2e.Ann {
		return ann
	}
	return bob
}

func (d driver) Platform() string { return Platform }

func (d driver) Adapter(t *testing.T, w e2e.Wiring) channels.Adapter {
	return d.f.adapter(t, Options{Logger: w.Logger, Admit: w.Admit})
}

func (d driver) Connected(t *testing.T, ctx context.Context) { d.f.waitLive(ctx) }

func (d driver) Access(r session.AccessRule) session.AccessRule {
	r.Guilds = []string{d.f.guild}
	return r
}

func (d driver) UserID(p e2e.Person) string { return person(p).ID }

func (d driver) ref(thread string) channels.ThreadRef {
	return channels.ThreadRef{Platform: Platform, Channel: d.f.channel, Thread: thread}
}

func (d driver) Mention(t *testing.T, _ context.Context, who e2e.Person, text string) channels.ThreadRef {
	return d.ref(d.f.say(person(who), d.f.channel, text, true))
}

func (d driver) Say(t *testing.T, _ context.Context, who e2e.Person, th channels.ThreadRef, text string) channels.MessageID {
	return channels.MessageID(d.f.say(person(who), th.Thread, text, false))
}

func (d driver) SayWhileDown(t *testing.T, who e2e.Person, th channels.ThreadRef, text string) {
	d.f.say(person(who), th.Thread, text, false)
}

func (d driver) Messages(th channels.ThreadRef) []e2e.Message {
	var out []e2e.Message
	for _, m := range d.f.botMessages(th.Thread) {
		var files []string
		for _, f := range m.Files {
			files = append(files, string(f.Body))
		}
		out = append(out, e2e.Message{ID: channels.MessageID(m.ID), Text: m.Content, Chars: utf8.RuneCountInString(m.Content),
			Controls: m.Components != nil, Files: files})
	}
	return out
}

func (d driver) Changed() <-chan struct{} {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return d.f.changed
}

// Click's Reply reads the first follow-up to the click's interaction,
// private when it is ephemeral (flags 64).
func (d driver) Click(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, m e2e.Message, suffix string) e2e.Reply {
	t.Helper()
	fm, ok := d.f.message(string(m.ID))
	if !ok {
		t.Fatalf("no message %s to click", m.ID)
	}
	token := d.f.click(person(who), th.Thread, fm.ID, customIDWithSuffix(t, fm, suffix))
	return func(sub string) (string, bool) {
		t.Helper()
		d.f.waitFor(ctx, "the answer to the click", func() bool {
			for _, fu := range d.f.followups {
				if fu.Token == token {
					return true
				}
			}
			return false
		})
		fu := d.f.followupsFor(token)[0]
		if !strings.Contains(fu.Content, sub) {
			t.Errorf("the click was answered %q, want %q in it", fu.Content, sub)
		}
		return fu.Content, fu.Flags == 64
	}
}

func (d driver) Edits(_ channels.ThreadRef, id channels.MessageID) int {
	m, _ := d.f.message(string(id))
	return m.Edits
}

// React reacts in the thread, or on the mention that opened it in the
// parent channel, where it lives.
func (d driver) React(t *testing.T, _ context.Context, who e2e.Person, th channels.ThreadRef, msg channels.MessageID, emoji string) {
	channel := th.Thread
	if string(msg) == th.Thread {
		channel = th.Channel
	}
	d.f.react(person(who), channel, string(msg), emoji, false)
}

func (d driver) Reactions(_ channels.ThreadRef, msg channels.MessageID) []string {
	return d.f.botReactions(string(msg))
}

func (d driver) HistoryReads(th channels.ThreadRef) int {
	return len(d.f.requestsMatching("GET", "/channels/"+th.Thread+"/messages"))
}

func (d driver) DeleteThread(t *testing.T, _ context.Context, th channels.ThreadRef) {
	d.f.deleteChannel(th.Thread)
}

func (d driver) DeleteChannel(t *testing.T, _ context.Context, channel string) {
	d.f.deleteChannel(channel)
}

// Started starts a thread from a message of the channel, as Discord does.
func (d driver) Started(t *testing.T, who e2e.Person, text string, at time.Time) (channels.ThreadRef, time.Time) {
	return d.ref(d.f.threadFrom(person(who), d.f.dated(person(who), d.f.channel, text, at), text)), at
}

func (d driver) Said(t *testing.T, who *e2e.Person, th channels.ThreadRef, text string, at time.Time) time.Time {
	u := bot2
	if who != nil {
		u = person(*who)
	}
	d.f.dated(u, th.Thread, text, at)
	return at
}

func (d driver) Dated(_ channels.ThreadRef, id channels.MessageID, at time.Time) time.Time {
	d.f.redate(id, at)
	return at
}

func (d driver) MentionIn(t *testing.T, _ context.Context, who e2e.Person, th channels.ThreadRef, text string) time.Time {
	id := d.f.say(person(who), th.Thread, text, true)
	m, _ := d.f.message(id)
	return m.Time
}

// Refusals counts the refusals in th: Discord has no private answer to
// a message, so the refusal is said in the thread, to whoever wrote.
func (d driver) Refusals(_ e2e.Person, th channels.ThreadRef) int {
	n := 0
	for _, m := range d.f.botMessages(th.Thread) {
		if strings.Contains(m.Content, "don't have access") {
			n++
		}
	}
	return n
}

func (d driver) Names() (self, otherBot string) { return d.f.bot.Name, bot2.Name }
