package discord

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
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

func (f *fakeDiscord) historyReadCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.historyReads
}

// TestBackfillE2E: mentioned inside a thread people had been talking in,
// the gateway reads the thread's last messages from Discord and the demo
// agent's first prompt starts with them, quoted with authors and times,
// a bot's marked, the gateway's own text marked as this bot's, within
// context.backfill (3 messages, 50 characters), the gateway's own tool
// line (edited once), permission prompt and notice (posted by the
// adapter, of an earlier session there) left out and counted for nothing;
// for a person without access nothing is read. In a thread started from
// a channel message, that message is quoted first; one deleted is left
// out.
func TestBackfillE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	leaks := channeltest.LeakCheck(t)
	t.Cleanup(leaks)
	f := newFake(t)
	dir := t.TempDir()
	at := time.Date(2026, 11, 25, 20, 10, 0, 0, time.UTC)

	// Said before the gateway was mentioned (and before it ran).
	th := f.peopleThread(bob, "build trouble")
	f.dated(bob, th, "too old to be read", at)
	f.dated(bob, th, "the build fails on main since this morning", at.Add(time.Minute)) // 42 characters: over the 50 with the next two
	f.dated(bot2, th, "build #12 failed", at.Add(2*time.Minute))
	f.dated(bob, th, "any idea?", at.Add(3*time.Minute))
	other := f.peopleThread(bob, "elsewhere")
	f.dated(bob, other, "something private", at)
	// Threads started from a message of the channel.
	asked := f.threadFrom(bob, f.dated(bob, f.channel, "the deploy of 1.4 hangs at step 3", at), "deploy")
	f.dated(bot2, asked, "deploy #7 stuck", at.Add(time.Minute))
	gone := f.threadFrom(bob, f.dated(bob, f.channel, "to be deleted", at), "gone")
	f.dated(bob, gone, "the question was deleted", at.Add(time.Minute))
	f.mu.Lock()
	delete(f.msgs, gone)
	f.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "demo-state")
	spec := sessiontest.DemoAgent(state, demoAgentEnv)
	ends := sessiontest.NewTurnEnds()
	policy := session.DefaultPolicy()
	policy.Context.Backfill = session.Backfill{Messages: 3, Chars: 50}
	var r *session.Router
	a := f.adapter(t, Options{Admit: func(ctx context.Context, in channels.Inbound) bool { return r.Admit(ctx, in) }})
	r = session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Access:      map[string]session.AccessRule{Platform: {Guilds: []string{f.guild}, Users: []string{ann.ID}}},
		OnTurnEnd:   ends.Record,
		Policy:      func(channels.ThreadRef, string) session.Policy { return policy },
	})
	r.Add(Platform, a)
	// The gateway's own posts of an earlier session in the thread: the
	// agent's answer, a tool line, a permission prompt and a notice.
	ref := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: th}
	for i, m := range []channels.Message{
		{Kind: channels.KindText, Text: "looking"},
		{Kind: channels.KindTool, Text: "🛠️ Run `ls` · running"},
		{Kind: channels.KindPermission},
		{Kind: channels.KindNotice, Text: "⚙️ Stopped."},
	} {
		var h channels.Handle
		var err error
		if m.Kind == channels.KindPermission {
			h, err = a.Prompt(ctx, ref, channels.Choice{Text: "Allow `rm -rf build`?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
		} else {
			h, err = a.Post(ctx, ref, m)
		}
		if err == nil && m.Kind == channels.KindTool {
			err = a.Edit(ctx, h, channels.Message{Kind: channels.KindTool, Text: "🛠️ Run `ls` · done"})
		}
		if err != nil {
			t.Fatal(err)
		}
		f.redate(h.ID, at.Add(4*time.Minute+time.Duration(i)*time.Second))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx, r.Handle); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	wg.Go(func() { r.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		st.Close()
	})
	f.waitLive(testCtx(t))

	// Bob may not prompt: his mention is refused and nothing is read.
	reads := f.historyReadCount()
	f.say(bob, other, "what was said here?", true)
	f.waitFor(testCtx(t), "the refusal", func() bool { return len(f.botMessagesLocked(other)) > 0 })
	if n := f.historyReadCount(); n != reads {
		t.Errorf("%d history reads for a person without access, want none", n-reads)
	}

	firstPrompt := func(ref channels.ThreadRef) string {
		t.Helper()
		if _, ok := ends.Next(testCtx(t), ref); !ok {
			t.Fatalf("no turn end in %v; messages:\n%s", ref, dumpBot(f, ref.Thread))
		}
		b, ok, err := st.Binding(t.Context(), ref)
		if err != nil || !ok {
			t.Fatalf("binding of %v: %v %v", ref, ok, err)
		}
		prompts, err := sessiontest.Prompts(state, b.SessionID)
		if err != nil || len(prompts) != 1 {
			t.Fatalf("the agent's prompts in %v = %q, %v; want one", ref, prompts, err)
		}
		return prompts[0]
	}

	f.say(ann, th, "echo hello", true)
	got := firstPrompt(ref)
	if f.historyReadCount() == reads {
		t.Error("the thread's history was not read")
	}
	want := "Earlier messages in this thread, for context (oldest first; older ones left out):\n" +
		"> otherbot (bot), 2026-11-25 20:12 UTC:\n> build #12 failed\n" +
		"> Bob, 2026-11-25 20:13 UTC:\n> any idea?\n" +
		"> " + f.bot.Name + " (this bot), 2026-11-25 20:14 UTC:\n> looking\n" +
		"\necho hello"
	if got != want {
		t.Errorf("the agent's first prompt:\n%s\nwant:\n%s", got, want)
	}

	f.say(ann, asked, "echo hi", true)
	want = "Earlier messages in this thread, for context (oldest first):\n" +
		"> Bob, 2026-11-25 20:10 UTC:\n> the deploy of 1.4 hangs at step 3\n" +
		"> otherbot (bot), 2026-11-25 20:11 UTC:\n> deploy #7 stuck\n" +
		"\necho hi"
	if got := firstPrompt(channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: asked}); got != want {
		t.Errorf("the first prompt in a thread started from a message:\n%s\nwant:\n%s", got, want)
	}

	f.say(ann, gone, "echo hey", true)
	want = "Earlier messages in this thread, for context (oldest first):\n" +
		"> Bob, 2026-11-25 20:11 UTC:\n> the question was deleted\n" +
		"\necho hey"
	if got := firstPrompt(channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: gone}); got != want {
		t.Errorf("the first prompt in a thread whose starting message was deleted:\n%s\nwant:\n%s", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.messageReads == 0 {
		t.Error("the deleted starting message was not looked for")
	}
}
