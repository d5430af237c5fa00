package discord

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
)

// TestLongAnswerDrawsNo429 streams a long answer with tool calls, each
// shown and then edited to its result, through the real dispatch lane and
// the adapter into the fake with Discord's limits: posts and edits share
// one bucket of five requests per five seconds in a channel. The adapter
// learns that from the responses and holds requests until the bucket
// refills, so Discord never answers 429, and nothing is lost.
func TestLongAnswerDrawsNo429(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	th := f.threadRef()
	d := newLaneDriver(t, a, th, clock)

	const rounds = 12
	var answer strings.Builder
	d.lane.BeginTurn(clock.now())
	d.step()
	for r := range rounds {
		// A paragraph streamed word by word, then a tool call that
		// runs for a while.
		for i, w := range strings.Fields(words(40 + r)) {
			chunk := w + " "
			if i == 0 && r > 0 {
				chunk = "\n\n" + chunk
			}
			answer.WriteString(chunk)
			d.push(projector.Text{Text: chunk})
			d.wait(60 * time.Millisecond)
		}
		id := projector.ToolCallID(fmt.Sprintf("call_%d", r))
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Run step %d · running", r), First: true})
		d.wait(700 * time.Millisecond)
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Run step %d · done", r)})
		d.wait(100 * time.Millisecond)
	}
	d.push(projector.TurnEnd{StopReason: "end_turn"})
	d.settle()

	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("Discord answered %d requests with 429; want none", n)
	}
	if d.obs.rateLimited == 0 {
		t.Error("the adapter never held a request back: the test did not reach Discord's limits")
	}
	if d.obs.delivered["edit"] == 0 {
		t.Error("no edit was delivered: the test did not mix posts and edits")
	}
	var tools, text []fakeMessage
	for _, m := range f.botMessages(f.thread) {
		if strings.HasPrefix(m.Content, "🛠️") {
			tools = append(tools, m)
		} else {
			text = append(text, m)
		}
	}
	if len(tools) != rounds {
		t.Errorf("%d tool messages, want one per tool call (%d)", len(tools), rounds)
	}
	for i, m := range tools {
		if want := fmt.Sprintf("🛠️ Run step %d · done", i); m.Content != want {
			t.Errorf("tool message %d = %q, want %q", i, m.Content, want)
		}
	}
	if got, want := answerText(text), strings.Join(strings.Fields(answer.String()), " "); got != want {
		t.Errorf("the answer in the thread is\n%s\nwant\n%s", got, want)
	}
}

// TestFirstEditAfterFivePosts: on a fresh adapter, an edit after five
// posts in a channel is held until the channel's message bucket refills,
// though the adapter has not yet seen which bucket edits belong to; it
// then goes through, and Discord never answers 429.
func TestFirstEditAfterFivePosts(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	ctx := testCtx(t)
	th := f.threadRef()
	var first channels.Handle
	for i := range 5 {
		h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("post %d", i)})
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if i == 0 {
			first = h
		}
		clock.set(clock.now().Add(100 * time.Millisecond))
	}
	err := a.Edit(ctx, first, channels.Message{Kind: channels.KindText, Text: "edited"})
	var rl *channels.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 4500*time.Millisecond+resetOffset {
		t.Fatalf("edit after five posts = %v, want a rate limit of 4.5 s and the offset", err)
	}
	if n := len(f.requestsMatching("PATCH", "/messages/")); n != 0 {
		t.Errorf("%d edits reached Discord while its bucket was exhausted", n)
	}
	clock.set(clock.now().Add(rl.RetryAfter))
	if err := a.Edit(ctx, first, channels.Message{Kind: channels.KindText, Text: "edited"}); err != nil {
		t.Fatalf("edit after the wait: %v", err)
	}
	if got, _ := f.content(string(first.ID)); got != "edited" {
		t.Errorf("message = %q, want %q", got, "edited")
	}
	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("Discord answered %d requests with 429; want none", n)
	}
}
