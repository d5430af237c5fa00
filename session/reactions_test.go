package session_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

var reactOpts = channeltest.Options{Edit: true, Typing: true, Prompt: true, React: true}

// inID is the id env.say gives a message.
func inID(text string) channels.MessageID { return channels.MessageID("in-" + text) }

// isReact matches the app's reaction emoji on message id.
func isReact(id channels.MessageID, emoji string) func(channeltest.Op) bool {
	return func(op channeltest.Op) bool { return op.Op == "react" && op.Msg == id && op.Text == emoji }
}

// reactionsOn replays the react and unreact ops on message id and fails
// if the gateway ever showed more than one reaction on it at once; it
// returns the emoji shown, in order.
func reactionsOn(t *testing.T, ops []channeltest.Op, id channels.MessageID) []string {
	t.Helper()
	var shown, seq []string
	for _, op := range ops {
		if op.Msg != id {
			continue
		}
		switch op.Op {
		case "react":
			shown = append(shown, op.Text)
			seq = append(seq, op.Text)
		case "unreact":
			shown = slices.DeleteFunc(shown, func(e string) bool { return e == op.Text })
		default:
			continue
		}
		if len(shown) > 1 {
			t.Fatalf("reactions piled up on %s: %q (ops %v)", id, shown, ops)
		}
	}
	return seq
}

// stopReaction is a person's 🛑 on message id.
func (e *env) stopReaction(th channels.ThreadRef, who channels.Author, id channels.MessageID) {
	e.t.Helper()
	in := channels.Inbound{Thread: th, Author: who, Reaction: &channels.Reaction{Message: id, Emoji: channels.ReactStop}, ID: "r-" + id}
	if err := e.rec.Deliver(e.ctx(), in); err != nil {
		e.t.Fatal(err)
	}
}

// TestReactionsThroughATurn: the prompt is marked 👀 while its turn runs,
// then ✅ once the turn's output is delivered, the one replacing the
// other; a message queued behind it is marked ⏳, then 👀, then ✅.
func TestReactionsThroughATurn(t *testing.T) {
	e := newEnv(t, envOptions{rec: reactOpts})
	th := e.rec.Thread("r")
	e.say(th, ann, "slow 20")
	e.waitOp(th, "👀 on the prompt", isReact(inID("slow 20"), channels.ReactTaken))
	e.say(th, bob, "echo second")
	e.waitOp(th, "⏳ on the queued message", isReact(inID("echo second"), channels.ReactQueued))
	e.waitEnd(th)
	e.waitEnd(th)
	e.waitOp(th, "✅ on the second", isReact(inID("echo second"), channels.ReactDone))
	e.waitOp(th, "✅ on the first", isReact(inID("slow 20"), channels.ReactDone))
	ops := e.rec.OpsIn(th)
	if got := reactionsOn(t, ops, inID("slow 20")); !slices.Equal(got, []string{"👀", "✅"}) {
		t.Errorf("the first message was marked %q, want 👀 then ✅", got)
	}
	if got := reactionsOn(t, ops, inID("echo second")); len(got) < 2 || got[0] != "⏳" || got[len(got)-1] != "✅" {
		t.Errorf("the queued message was marked %q, want ⏳ … ✅", got)
	}
	for _, id := range []channels.MessageID{inID("slow 20"), inID("echo second")} {
		if got := e.rec.Reactions(id); !slices.Equal(got, []string{"✅"}) {
			t.Errorf("%s shows %q, want only ✅", id, got)
		}
	}
	// ✅ comes after the first turn's last text (the ops before its
	// turn_end note).
	lastText, done := -1, -1
	for i, op := range ops {
		if op.Op == "turn_end" {
			break
		}
		if op.Kind == channels.KindText && (op.Op == "send" || op.Op == "edit") {
			lastText = i
		}
	}
	done = slices.IndexFunc(ops, isReact(inID("slow 20"), channels.ReactDone))
	if lastText < 0 || done < lastText {
		t.Errorf("✅ (op %d) before the first turn's last text (op %d): %v", done, lastText, ops)
	}
}

// TestReactionsOff: reactions.mode off marks nothing.
func TestReactionsOff(t *testing.T) {
	p := session.DefaultPolicy()
	p.Reactions.Mode = session.ReactionsOff
	e := newEnv(t, envOptions{rec: reactOpts, policy: &p})
	th := e.rec.Thread("off")
	e.say(th, ann, "echo hi")
	e.waitEnd(th)
	for _, op := range e.rec.Attempts() {
		if op.Op == "react" || op.Op == "unreact" {
			t.Fatalf("reaction with reactions off: %+v", op)
		}
	}
}

// TestStopReaction: 🛑 on the prompt, or on a message the turn posted,
// stops the turn as "stop" does, and the prompt is marked ⏹️; 🛑 by
// someone who may not stop, or any other reaction, is ignored.
func TestStopReaction(t *testing.T) {
	for _, on := range []string{"the prompt", "a message of the turn"} {
		t.Run(on, func(t *testing.T) {
			e := newEnv(t, envOptions{rec: reactOpts})
			th := e.rec.Thread("s")
			e.say(th, ann, "slow 400")
			text := e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText && op.Op == "send" })
			target := inID("slow 400")
			if on != "the prompt" {
				target = text.Msg
			}
			e.stopReaction(th, bob, target)
			if end := e.waitEnd(th); end.StopReason != "cancelled" {
				t.Fatalf("stop reason %q, want cancelled", end.StopReason)
			}
			e.waitOp(th, "the stopped notice", hasText("Stopped by Bob."))
			e.waitOp(th, "⏹️ on the prompt", isReact(inID("slow 400"), channels.ReactStopped))
		})
	}
	t.Run("ignored", func(t *testing.T) {
		rule := session.AccessRule{Users: []string{ann.ID}}
		e := newEnv(t, envOptions{rec: reactOpts, access: map[string]session.AccessRule{"web": rule}})
		th := e.rec.Thread("i")
		e.say(th, ann, "slow 20")
		text := e.waitOp(th, "streamed text", func(op channeltest.Op) bool { return op.Kind == channels.KindText && op.Op == "send" })
		e.stopReaction(th, bob, inID("slow 20")) // Bob may not stop
		e.stopReaction(th, bob, text.Msg)
		other := channels.Inbound{Thread: th, Author: ann, Reaction: &channels.Reaction{Message: inID("slow 20"), Emoji: "👍"}, ID: "thumbs"}
		if err := e.rec.Deliver(e.ctx(), other); err != nil {
			t.Fatal(err)
		}
		removed := channels.Inbound{Thread: th, Author: ann, Reaction: &channels.Reaction{Message: inID("slow 20"), Emoji: channels.ReactStop, Removed: true}, ID: "removed"}
		if err := e.rec.Deliver(e.ctx(), removed); err != nil {
			t.Fatal(err)
		}
		if end := e.waitEnd(th); end.StopReason != "end_turn" {
			t.Fatalf("stop reason %q, want end_turn: the reactions stopped the turn", end.StopReason)
		}
		e.waitOp(th, "✅ on the prompt", isReact(inID("slow 20"), channels.ReactDone))
	})
}

// slowReactor is the recorder's adapter whose reactions hang until
// released: the thread's messages must not wait for them.
type slowReactor struct {
	channels.Adapter
	channels.Editor
	channels.Typer
	channels.TypingStopper
	channels.Prompter
	r       channels.Reactor
	release chan struct{}
}

func (s slowReactor) React(ctx context.Context, h channels.Handle, emoji string) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.r.React(ctx, h, emoji)
}

func (s slowReactor) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	return s.r.Unreact(ctx, h, emoji)
}

// TestReactionsNeverHoldMessagesBack: while the platform's reaction
// calls hang, or are rate limited, the turn's messages are delivered; the
// reactions land once the platform lets them, replaced as they go.
func TestReactionsNeverHoldMessagesBack(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Edit: true, Typing: true, Prompt: true, React: true, Platform: "web"})
	a := rec.Adapter()
	slow := slowReactor{Adapter: a, Editor: a.(channels.Editor), Typer: a.(channels.Typer), TypingStopper: a.(channels.TypingStopper),
		Prompter: a.(channels.Prompter), r: a.(channels.Reactor), release: make(chan struct{})}
	e := newEnv(t, envOptions{rec: channeltest.Options{Platform: "web"}, recorder: rec, adapter: slow})
	th := e.rec.Thread("slow")
	e.say(th, ann, "echo first")
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("stop reason %q", end.StopReason)
	}
	if got := e.text(th); got == "" {
		t.Fatal("no text delivered while a reaction hung")
	}
	if got := rec.Reactions(inID("echo first")); len(got) != 0 {
		t.Fatalf("reactions %q landed while the platform hung", got)
	}
	// Rate limited twice, then let through: the reaction waits, and
	// what lands is the last wanted.
	rec.Inject(channeltest.InjectReact, &channels.RateLimitError{RetryAfter: 20 * time.Millisecond, Scope: "reaction"})
	rec.Inject(channeltest.InjectReact, &channels.RateLimitError{RetryAfter: 20 * time.Millisecond, Scope: "reaction"})
	close(slow.release)
	e.waitOp(th, "✅ on the message", isReact(inID("echo first"), channels.ReactDone))
	if got := rec.Reactions(inID("echo first")); !slices.Equal(got, []string{"✅"}) {
		t.Errorf("reactions %q, want only ✅", got)
	}
	limited := 0
	for _, op := range rec.Attempts() {
		if op.Op == "react" && op.Error != "" {
			limited++
		}
	}
	if limited != 2 {
		t.Errorf("%d rate-limited reaction calls, want 2", limited)
	}
	reactionsOn(t, rec.OpsIn(th), inID("echo first"))
}
