package session_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// TestPromptThatCannotBeShownIsCancelledAtOnce: a permission prompt the
// platform refuses is answered cancelled at once (not after
// permissions.timeout, 10 minutes, far past this test's 30 s), and the
// thread is told.
func TestPromptThatCannotBeShownIsCancelledAtOnce(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("unshown")
	e.rec.Inject(channeltest.InjectPrompt, channels.Permanent(errors.New("50035 invalid form body")))
	e.say(th, ann, "permission")
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Errorf("turn end %+v, want cancelled: the agent got the cancelled outcome", end)
	}
	e.waitOp(th, "the thread told", hasText("Cancelled: the prompt could not be shown in this thread"))
	if n := len(e.messages(th, channels.KindPermission)); n != 1 {
		t.Errorf("%d permission messages, want the one that says it was cancelled", n)
	}
}

func isText(op channeltest.Op) bool { return op.Kind == channels.KindText }

// TestBusyMessagesWaitInLine: with one agent slot, three threads' messages
// all get answered, first come first served, each told its place while
// it waits.
func TestBusyMessagesWaitInLine(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, limits: session.Limits{MaxProcesses: 1}})
	a, b, c := e.rec.Thread("a"), e.rec.Thread("b"), e.rec.Thread("c")
	e.say(a, ann, "slow 40")
	e.waitOp(a, "a streaming", isText)
	e.say(b, bob, "echo from b")
	e.waitOp(b, "b's place", hasText("Waiting for a free agent: every agent is working"))
	e.say(c, ann, "echo from c")
	e.waitOp(c, "c's place", hasText("Waiting for a free agent: 1 ahead of you."))
	var order []channels.ThreadRef
	ctx := e.ctx()
	for len(order) < 3 {
		select {
		case te := <-e.finished:
			if te.end.StopReason != "end_turn" {
				t.Errorf("%s: %+v", te.thread, te.end)
			}
			order = append(order, te.thread)
		case <-ctx.Done():
			t.Fatalf("answered so far: %v", order)
		}
	}
	if want := []channels.ThreadRef{a, b, c}; !slicesEqual(order, want) {
		t.Errorf("answered in order %v, want %v", order, want)
	}
	e.waitEnd(c)
	for th, want := range map[channels.ThreadRef]string{b: "from b", c: "from c"} {
		if got := e.text(th); !strings.HasSuffix(got, want) {
			t.Errorf("%s: text %q, want the answer %q", th, got, want)
		}
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStopWhileWaitingLeavesTheLine: "stop" takes a waiting message out of
// the line; it never runs.
func TestStopWhileWaitingLeavesTheLine(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, limits: session.Limits{MaxProcesses: 1}})
	a, b := e.rec.Thread("a"), e.rec.Thread("b")
	e.say(a, ann, "slow 400")
	e.waitOp(a, "a streaming", isText)
	e.say(b, bob, "echo never shown")
	e.waitOp(b, "b waiting", hasText("Waiting for a free agent"))
	e.say(b, bob, "stop")
	e.waitOp(b, "the stop notice", hasText("Stopped by Bob before the agent began."))
	e.say(a, ann, "stop")
	e.waitEnd(a)
	e.say(b, bob, "echo shown")
	if end := e.waitEnd(b); end.StopReason != "end_turn" {
		t.Errorf("b: %+v", end)
	}
	if got := e.text(b); strings.Contains(got, "never") || !strings.HasSuffix(got, "shown") {
		t.Errorf("b's text %q: want only the message sent after the stop answered", got)
	}
}

// TestNoticeSurvivesAnOutage: a notice is retried through an outage like
// any output, not given up after a few tries.
func TestNoticeSurvivesAnOutage(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("idle")
	e.rec.Inject(channeltest.InjectPost, errors.New("dial tcp: connect: connection refused"))
	e.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 50 * time.Millisecond, Scope: "post"})
	e.rec.Inject(channeltest.InjectPost, errors.New("503 service unavailable"))
	e.say(th, ann, "stop")
	e.waitOp(th, "the notice after the outage", hasText("Nothing is running."))
}

// TestRefusalSurvivesAnOutage: a person without access is told so even
// when the platform fails the first tries.
func TestRefusalSurvivesAnOutage(t *testing.T) {
	rule := session.AccessRule{Users: []string{ann.ID}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, access: map[string]session.AccessRule{"web": rule}})
	th := e.rec.Thread("refused")
	e.rec.Inject(channeltest.InjectPost, errors.New("dial tcp: connect: connection refused"))
	e.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 50 * time.Millisecond, Scope: "post"})
	// No Reply: the answer goes into the thread, through Post.
	if err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: bob, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "the refusal after the outage", hasText("you don't have access"))
}
