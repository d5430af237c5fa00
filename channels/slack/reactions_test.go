package slack

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

// TestReact: the gateway's emoji become Slack's names on the message;
// adding a reaction already there and removing one not there are no
// errors; an emoji without a Slack name is refused without a call; calls
// closer than the interval get a rate limit error without a call.
func TestReact(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{ReactionInterval: -1})
	ctx := testCtx(t)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	r, ok := channels.As[channels.Reactor](a)
	if !ok {
		t.Fatal("the adapter is not a channels.Reactor")
	}
	h := channels.Handle{Thread: ref(fakeChannel, fakeThread), ID: fakeThread}
	for _, e := range []string{"👀", "⏳", "👀"} {
		if err := r.React(ctx, h, e); err != nil {
			t.Fatalf("React %s: %v", e, err)
		}
	}
	if err := r.Unreact(ctx, h, "⏳"); err != nil {
		t.Fatal(err)
	}
	if err := r.Unreact(ctx, h, "✅"); err != nil {
		t.Errorf("Unreact of a reaction not there = %v, want nil", err)
	}
	for _, e := range []string{"✅", "⏹️", "🛑", "❌"} {
		if err := r.React(ctx, h, e); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"eyes", "white_check_mark", "black_square_for_stop", "octagonal_sign", "x"}
	if got := f.reactionsOn(fakeChannel, fakeThread); !cmp.Equal(got, want) {
		t.Errorf("reactions = %v, want %v", got, want)
	}
	calls := len(f.callsTo("reactions.add"))
	if err := r.React(ctx, h, "🦄"); err == nil || !channels.IsPermanent(err) {
		t.Errorf("React with an emoji Slack has no name for = %v, want a permanent error", err)
	}
	if n := len(f.callsTo("reactions.add")); n != calls {
		t.Errorf("an unknown emoji made %d calls", n-calls)
	}

	paced := f.adapter(t, Options{})
	if err := paced.React(ctx, h, "🔥"); err != nil {
		t.Fatal(err)
	}
	err := paced.React(ctx, h, "🤔")
	if rl, ok := errors.AsType[*channels.RateLimitError](err); !ok || rl.RetryAfter <= 0 || rl.RetryAfter > minReactInterval {
		t.Errorf("a second reaction at once = %v, want a rate limit error of at most %v", err, minReactInterval)
	}
	if got := f.reactionsOn(fakeChannel, fakeThread); slices.Contains(got, "thinking_face") {
		t.Errorf("the paced reaction was made: %v", got)
	}
}

// TestReactionInbound: a person's reaction on a message of a bound thread
// (theirs or the app's) arrives as Inbound.Reaction with the emoji, and
// its removal with Removed; reactions on messages of other threads and
// the app's own reactions do not arrive.
func TestReactionInbound(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	s := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "start", mention: true})
	in := r.next(ctx)
	reply, err := a.Post(ctx, in.Thread, channels.Message{Text: "working on it"})
	if err != nil {
		t.Fatal(err)
	}
	other := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "not for the app"})
	if err := f.react(ctx, "U0ANN", fakeChannel, other.ts, "octagonal_sign", false); err != nil {
		t.Fatal(err)
	}
	if err := f.react(ctx, f.botUser, fakeChannel, s.ts, "eyes", false); err != nil {
		t.Fatal(err)
	}
	if err := f.react(ctx, "U0ANN", fakeChannel, string(reply.ID), "octagonal_sign", false); err != nil {
		t.Fatal(err)
	}
	got := r.next(ctx)
	want := channels.Reaction{Message: reply.ID, Emoji: "🛑"}
	if got.Intent() != channels.IntentReaction || !cmp.Equal(*got.Reaction, want) || got.Thread != in.Thread || got.Author.ID != "U0ANN" || got.Author.Name != "Ann" {
		t.Fatalf("inbound = %v %+v in %v by %+v, want %+v in %v by Ann", got.Intent(), got.Reaction, got.Thread, got.Author, want, in.Thread)
	}
	if err := f.react(ctx, "U0ANN", fakeChannel, s.ts, "tada", true); err != nil {
		t.Fatal(err)
	}
	got = r.next(ctx)
	if want := (channels.Reaction{Message: channels.MessageID(s.ts), Emoji: "tada", Removed: true}); got.Reaction == nil || !cmp.Equal(*got.Reaction, want) {
		t.Errorf("removal = %+v, want %+v", got.Reaction, want)
	}
}

// TestRedeliveredReactionOnce: a reaction's Inbound.ID is its event_id,
// so a redelivery of its envelope (Slack's retry, which keeps the event
// id) is acted on once here and is the same event to whoever de-duplicates
// by id after the adapter (the cluster's inbound stream, Nats-Msg-Id).
func TestRedeliveredReactionOnce(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	f.mustSay(ctx, sayOptions{user: "U0ANN", text: "start", mention: true})
	in := r.next(ctx)
	reply, err := a.Post(ctx, in.Thread, channels.Message{Text: "working on it"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := f.reactEnvelope(ctx, "U0ANN", fakeChannel, string(reply.ID), "octagonal_sign", false)
	if err != nil {
		t.Fatal(err)
	}
	f.mustRedeliver(ctx, env, 1)
	f.mustRedeliver(ctx, env, 2)
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: in.Thread.Thread, text: "after"})
	got := r.next(ctx)
	eventID := env["payload"].(map[string]any)["event_id"].(string)
	if got.Intent() != channels.IntentReaction || got.ID != channels.MessageID(eventID) {
		t.Fatalf("inbound = %v with id %q, want the reaction with id %q (its event_id)", got.Intent(), got.ID, eventID)
	}
	if next := r.next(ctx); next.Text != "after" {
		t.Errorf("after the reaction came %v %+v (id %q), want the next message: a redelivery was delivered again", next.Intent(), next.Reaction, next.ID)
	}
}
