package discord

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest/e2e"
	"github.com/acpgw/gateway/session"
)

// peopleThread opens a thread in the fake's channel that a person made,
// not the bot: the gateway is not part of it until it is mentioned there.
func (f *fakeDiscord) peopleThread(owner fakeUser, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newIDLocked()
	f.chans[id] = &fakeChannel{ID: id, Type: 11, Guild: f.guild, Parent: f.channel, Owner: owner.ID, Name: name}
	return id
}

// dated says text in channel, dated at.
func (f *fakeDiscord) dated(who fakeUser, channel, text string, at time.Time) string {
	id := f.say(who, channel, text, false)
	f.mu.Lock()
	f.msgs[id].Time = at
	f.mu.Unlock()
	return id
}

// threadFrom has who start a thread from message msg of the fake's
// channel, as Discord does: the thread has the message's id, the message
// stays in the channel, and the thread's first message is a
// THREAD_STARTER_MESSAGE that points at it.
func (f *fakeDiscord) threadFrom(who fakeUser, msg, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chans[msg] = &fakeChannel{ID: msg, Type: 11, Guild: f.guild, Parent: f.channel, Owner: who.ID, Name: name}
	id := f.newIDLocked()
	f.msgs[id] = &fakeMessage{ID: id, Channel: msg, Author: who, Type: 21, Starter: msg, Time: f.msgs[msg].Time}
	return msg
}

// redate dates message id at.
func (f *fakeDiscord) redate(id channels.MessageID, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs[string(id)].Time = at
}

// TestBackfillOfDiscordThreads: what the suite's Backfill does not
// show, for Discord's kinds of thread: a thread a person made (not from
// a message) is read from its own messages, the oldest left out past
// context.backfill (3 messages, 50 characters); in a thread started from
// a channel message since deleted, the message is looked for and left
// out.
func TestBackfillOfDiscordThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	e2e.LeakCheck(t)
	d := newDriver(t)
	f := d.f
	at := time.Date(2026, 11, 25, 20, 10, 0, 0, time.UTC)
	th := f.peopleThread(bob, "build trouble")
	f.dated(bob, th, "too old to be read", at)
	f.dated(bob, th, "the build fails on main since this morning", at.Add(time.Minute)) // 42 characters: over the 50 with the next two
	f.dated(bot2, th, "build #12 failed", at.Add(2*time.Minute))
	f.dated(bob, th, "any idea?", at.Add(3*time.Minute))
	gone := f.threadFrom(bob, f.dated(bob, f.channel, "to be deleted", at), "gone")
	f.dated(bob, gone, "the question was deleted", at.Add(time.Minute))
	f.mu.Lock()
	delete(f.msgs, gone)
	f.mu.Unlock()
	policy := session.DefaultPolicy()
	policy.Context.Backfill = session.Backfill{Messages: 3, Chars: 50}
	g := e2e.Start(t, d, e2e.Config{AgentEnv: demoAgentEnv, Access: session.AccessRule{Users: []string{ann.ID}}, Policy: &policy})

	f.say(ann, th, "echo hello", true)
	want := "Earlier messages in this thread, for context (oldest first; older ones left out):\n" +
		"> otherbot (bot), 2026-11-25 20:12 UTC:\n> build #12 failed\n" +
		"> Bob, 2026-11-25 20:13 UTC:\n> any idea?\n" +
		"\necho hello"
	if got := g.FirstPrompt(d.ref(th)); got != want {
		t.Errorf("the first prompt in a thread a person made:\n%s\nwant:\n%s", got, want)
	}

	f.say(ann, gone, "echo hey", true)
	want = "Earlier messages in this thread, for context (oldest first):\n" +
		"> Bob, 2026-11-25 20:11 UTC:\n> the question was deleted\n" +
		"\necho hey"
	if got := g.FirstPrompt(d.ref(gone)); got != want {
		t.Errorf("the first prompt in a thread whose starting message was deleted:\n%s\nwant:\n%s", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.messageReads == 0 {
		t.Error("the deleted starting message was not looked for")
	}
}
