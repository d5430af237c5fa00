package discord

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// TestReact: the app adds and removes its own reactions, a Unicode emoji
// URL-escaped in the path (the fake refuses a raw one) and a custom one
// by name:id.
func TestReact(t *testing.T) {
	f := newFake(t)
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	msg := f.say(ann, f.thread, "please", false)
	h := channels.Handle{Thread: f.threadRef(), ID: channels.MessageID(msg)}
	for _, e := range []string{"👀", "⏹️", "party:4242"} {
		if err := a.React(ctx, h, e); err != nil {
			t.Fatalf("React(%s): %v", e, err)
		}
	}
	if err := a.Unreact(ctx, h, "👀"); err != nil {
		t.Fatalf("Unreact: %v", err)
	}
	if got, want := f.botReactions(msg), []string{"⏹️", "party:4242"}; !slices.Equal(got, want) {
		t.Errorf("the bot's reactions = %q, want %q", got, want)
	}
	if err := a.React(ctx, channels.Handle{Thread: f.threadRef(), ID: "1099999999999999999"}, "✅"); err == nil || !channels.IsPermanent(err) {
		t.Errorf("React on a missing message = %v, want a permanent error", err)
	}
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("fake discord saw protocol misuse: %q", v)
	}
}

// TestReactRateLimited: reactions have a small bucket (one a quarter
// second per channel, whatever the emoji); the adapter learns it and
// refuses the next reaction with a *channels.RateLimitError before
// sending, and a 429 comes back as one too.
func TestReactRateLimited(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	ctx := testCtx(t)
	msg := f.say(ann, f.thread, "please", false)
	h := channels.Handle{Thread: f.threadRef(), ID: channels.MessageID(msg)}
	if err := a.React(ctx, h, "👀"); err != nil {
		t.Fatalf("React: %v", err)
	}
	var rl *channels.RateLimitError
	if err := a.React(ctx, h, "✅"); !errors.As(err, &rl) || rl.RetryAfter <= 0 || rl.RetryAfter > time.Second {
		t.Fatalf("a second reaction at once = %v, want a rate limit of at most a second", err)
	}
	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("the fake answered %d 429s; the adapter should have held the request", n)
	}
	clock.set(clock.now().Add(300 * time.Millisecond))
	if err := a.Unreact(ctx, h, "👀"); err != nil {
		t.Fatalf("Unreact after the wait: %v", err)
	}
	// A 429 the adapter could not foresee.
	clock.set(clock.now().Add(300 * time.Millisecond))
	f.inject("PUT", "/reactions/", 1, 429, `{"message":"You are being rate limited.","retry_after":0.5,"global":false}`, map[string][]string{"Retry-After": {"1"}})
	if err := a.React(ctx, h, "✅"); !errors.As(err, &rl) {
		t.Fatalf("React answered 429 = %v, want a *channels.RateLimitError", err)
	}
}

// TestReactionEvents: a person's reaction in the bot's thread arrives as
// Inbound.Reaction (added, then removed); the bot's own reactions and
// those outside its threads do not.
func TestReactionEvents(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	msg := f.say(ann, f.thread, "please", false)
	if in := s.next(t); in.Text != "please" {
		t.Fatalf("inbound = %+v", in)
	}
	f.react(f.bot, f.thread, msg, "👀", false)
	f.react(ann, f.channel, msg, "🛑", false)
	f.react(ann, f.thread, msg, "🛑", false)
	in := s.next(t)
	if in.Intent() != channels.IntentReaction || *in.Reaction != (channels.Reaction{Message: channels.MessageID(msg), Emoji: "🛑"}) || in.Author.ID != ann.ID || in.Author.Name != ann.Name || in.Thread != f.threadRef() {
		t.Fatalf("inbound = %+v (%+v), want Ann's 🛑 on her message in the thread", in, in.Reaction)
	}
	f.react(bob, f.thread, msg, "party:4242", true)
	in = s.next(t)
	if in.Reaction == nil || *in.Reaction != (channels.Reaction{Message: channels.MessageID(msg), Emoji: "party:4242", Removed: true}) || in.Author.ID != bob.ID {
		t.Fatalf("inbound = %+v (%+v), want Bob's removed party:4242", in, in.Reaction)
	}
}

// TestReactionEventIDs: Discord gives a reaction event no id, so its
// Inbound.ID is made of message, user, add or remove, emoji and the
// dispatch's session and sequence number: a reaction added, removed and
// added again gives three ids, as do another person's and another emoji;
// Discord's replay of a dispatch when the session resumes has the same id
// as the first delivery (de-duplication by id drops it).
func TestReactionEventIDs(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	msg := f.say(ann, f.thread, "please", false)
	if in := s.next(t); in.Text != "please" {
		t.Fatalf("inbound = %+v", in)
	}
	f.react(ann, f.thread, msg, "🛑", false)
	f.react(ann, f.thread, msg, "🛑", true)
	f.react(ann, f.thread, msg, "🛑", false) // added again
	f.react(bob, f.thread, msg, "🛑", false)
	f.react(ann, f.thread, msg, "party:4242", false)
	var ids []channels.MessageID
	next := func() channels.Inbound {
		in := s.next(t)
		if in.Intent() != channels.IntentReaction {
			t.Fatalf("inbound = %+v, want a reaction", in)
		}
		ids = append(ids, in.ID)
		return in
	}
	for range 5 {
		next()
	}
	for i, id := range ids {
		if id == "" || id == channels.MessageID(msg) || slices.Contains(ids[i+1:], id) {
			t.Errorf("ids %q: want each distinct, none empty or the message's", ids)
		}
	}

	// The connection drops; the resume replays the last dispatch.
	f.waitLive(testCtx(t))
	f.replayOnResume(1)
	f.dropConnection()
	f.react(bob, f.thread, msg, "🛑", true)
	if in := next(); in.Reaction.Emoji != "party:4242" || in.ID != ids[4] {
		t.Errorf("the replayed reaction = %+v with id %q, want Ann's party:4242 with id %q", in.Reaction, in.ID, ids[4])
	}
	if in := next(); !in.Reaction.Removed || in.Author.ID != bob.ID || slices.Contains(ids[:6], in.ID) {
		t.Errorf("the reaction after the resume = %+v with id %q, want Bob's removal with an id of its own (ids %q)", in.Reaction, in.ID, ids)
	}
}
