package discord

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// waitHeld waits until the adapter holds a form click for its form's
// post, or interaction token was answered (as a click that is not held
// is).
func waitHeld(t *testing.T, f *fakeDiscord, a *Adapter, token string) {
	t.Helper()
	ctx := testCtx(t)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for a.forms.holding() == 0 && f.interaction(token).Acked.IsZero() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the click was neither held nor answered")
		}
	}
}

// TestFormClickedBeforeItsPostReturns: people see a form as soon as
// Discord has it, before the request that posted it returns; a pick and
// an Answer made then wait for the post and answer the agent's question
// like any other, and nobody is told that the question is no longer open.
func TestFormClickedBeforeItsPostReturns(t *testing.T) {
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Approvers: []string{ann.ID}})
	ctx := testCtx(t)
	held := f.holdAnswer("POST", "/messages", formAnswerID)

	id := f.say(ann, f.channel, "ask-choice", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	if !held.waitReached(ctx) {
		t.Fatal("the form was never posted")
	}
	form := g.waitForm(id, 0)
	menu, _, _ := selectMenu(form)
	pick := f.pick(ann, id, form.ID, menu, "green")
	answer := f.click(ann, id, form.ID, formAnswerID)
	waitHeld(t, f, g.a, pick)
	if it := f.interaction(pick); !it.Acked.IsZero() {
		t.Fatalf("the pick was answered before the form's post returned: %s", it.AckBody)
	}
	close(held.release)

	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := answerText(g.since(id, 0)); !strings.Contains(got, "You chose green.") {
		t.Errorf("answer = %q, want the agent to say green\n%s", got, g.dump(id))
	}
	for _, tok := range []string{pick, answer} {
		if typ, content, _ := ackData(t, f, tok); typ != 6 || strings.Contains(content, "no longer open") {
			t.Errorf("interaction %s was answered with type %d %q, want a deferred update (6)", tok, typ, content)
		}
	}
}

// TestClickOnNoFormWhilePosting: a click on a message that is no open
// form, while a form is being posted in its thread, is told that the
// question is no longer open once that post has returned.
func TestClickOnNoFormWhilePosting(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	held := f.holdAnswer("POST", "/messages", formAnswerID)
	posted := make(chan error, 1)
	go func() {
		_, err := s.a.Form(ctx, f.threadRef(), testForm())
		posted <- err
	}()
	if !held.waitReached(ctx) {
		t.Fatal("the form was never posted")
	}
	other := f.say(bob, f.thread, "not a form", false)
	tok := f.click(ann, f.thread, other, formAnswerID)
	waitHeld(t, f, s.a, tok)
	if it := f.interaction(tok); !it.Acked.IsZero() {
		t.Fatalf("the click was answered before the form's post returned: %s", it.AckBody)
	}
	close(held.release)
	if err := <-posted; err != nil {
		t.Fatalf("Form: %v", err)
	}
	f.waitFor(ctx, "the refusal", func() bool { return !f.interactions[tok].Acked.IsZero() })
	if typ, content, flags := ackData(t, f, tok); typ != 4 || flags&64 == 0 || !strings.Contains(content, "no longer open") {
		t.Errorf("the click was answered with type %d flags %d %q, want a private refusal", typ, flags, content)
	}
	if n := s.a.forms.holding(); n != 0 {
		t.Errorf("%d clicks still held", n)
	}
}

// TestFormWaitIsBounded: a click waits for the forms being posted in its
// channel at most formWait, and not at all where none is; a post that
// returns ends the wait at once and leaves nothing behind.
func TestFormWaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fs forms
		start := time.Now()
		if f := fs.await(t.Context(), "c1", "m1"); f != nil || time.Since(start) != 0 {
			t.Errorf("await with no post = %v after %v, want nil at once", f, time.Since(start))
		}
		done := fs.startPost("c1") // a post that never returns
		if f := fs.await(t.Context(), "c2", "m1"); f != nil || time.Since(start) != 0 {
			t.Errorf("await in another channel = %v after %v, want nil at once", f, time.Since(start))
		}
		if f := fs.await(t.Context(), "c1", "m1"); f != nil || time.Since(start) != formWait {
			t.Errorf("await while a post hangs = %v after %v, want nil after %v", f, time.Since(start), formWait)
		}
		done()

		start = time.Now()
		done = fs.startPost("c1")
		go func() {
			time.Sleep(100 * time.Millisecond)
			fs.put("m2", &openForm{picks: map[int][]string{}})
			done()
		}()
		if f := fs.await(t.Context(), "c1", "m2"); f == nil || time.Since(start) != 100*time.Millisecond {
			t.Errorf("await = %v after %v, want the form when its post returned", f, time.Since(start))
		}
		if len(fs.posting) != 0 || fs.holding() != 0 {
			t.Errorf("left behind: %d channels posting, %d held", len(fs.posting), fs.holding())
		}

		ctx, cancel := context.WithCancel(t.Context())
		done = fs.startPost("c1")
		defer done()
		go func() { time.Sleep(time.Millisecond); cancel() }()
		if f := fs.await(ctx, "c1", "m3"); f != nil || time.Since(start) != 101*time.Millisecond {
			t.Errorf("await after its context ended = %v at %v", f, time.Since(start))
		}
	})
}

// waitForm waits for a form (a message with an Answer button) in channel
// after the first n.
func (g *gateway) waitForm(channel string, n int) fakeMessage {
	g.t.Helper()
	var got fakeMessage
	g.f.waitFor(testCtx(g.t), "the question's form", func() bool {
		ms := g.f.botMessagesLocked(channel)
		for i := n; i < len(ms); i++ {
			if strings.Contains(string(ms[i].Components), formAnswerID) {
				got = ms[i]
				return true
			}
		}
		return false
	})
	return got
}
