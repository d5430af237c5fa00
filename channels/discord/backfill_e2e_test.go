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

func (f *fakeDiscord) historyReadCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.historyReads
}

// TestBackfillE2E: mentioned inside a thread people had been talking in,
// the gateway reads the thread's last messages from Discord and the demo
// agent's first prompt starts with them, quoted with authors and times,
// a bot's marked, within context.backfill (3 messages, 50 characters);
// for a person without access nothing is read.
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

	f.say(ann, th, "echo hello", true)
	ref := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: th}
	if _, ok := ends.Next(testCtx(t), ref); !ok {
		t.Fatalf("no turn end; messages:\n%s", dumpBot(f, th))
	}
	if f.historyReadCount() == reads {
		t.Error("the thread's history was not read")
	}
	b, ok, err := st.Binding(t.Context(), ref)
	if err != nil || !ok {
		t.Fatalf("binding of %v: %v %v", ref, ok, err)
	}
	prompts, err := sessiontest.Prompts(state, b.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	want := "Earlier messages in this thread, for context (oldest first; older ones left out):\n" +
		"> otherbot (bot), 2026-11-25 20:12 UTC:\n> build #12 failed\n" +
		"> Bob, 2026-11-25 20:13 UTC:\n> any idea?\n" +
		"\necho hello"
	if len(prompts) != 1 || prompts[0] != want {
		t.Errorf("the agent's prompts = %q, want one:\n%s", prompts, want)
	}
}
