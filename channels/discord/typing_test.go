package discord

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/projector"
)

// TestTypingStaysWhileTheTurnRuns: Discord hides the bot's typing
// indicator when it posts. While a turn runs, the adapter's Limits make
// dispatch show it again right after each post, so whenever time passes
// during the turn a person sees the bot typing; after the turn's end no
// typing call is made. Discord's rate limits hold throughout (no 429).
func TestTypingStaysWhileTheTurnRuns(t *testing.T) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{})
	withClock(t, a, clock)
	th := f.threadRef()
	d := newLaneDriver(t, a, th, clock)
	hidden := 0
	d.between = func() {
		if !d.ended && !f.typingShown(f.thread) {
			hidden++
			if hidden == 1 {
				t.Errorf("at %v, with %d bot messages posted, the turn runs but no typing shows",
					clock.now().Sub(newClock().now()), len(f.botMessages(f.thread)))
			}
		}
	}
	d.lane.BeginTurn(clock.now())
	d.step()
	for r := range 4 {
		for i, w := range strings.Fields(words(30)) {
			chunk := w + " "
			if i == 0 && r > 0 {
				chunk = "\n\n" + chunk
			}
			d.push(projector.Text{Text: chunk})
			d.wait(50 * time.Millisecond)
		}
		id := projector.ToolCallID(fmt.Sprintf("call_%d", r))
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Run step %d · running", r), First: true})
		d.wait(3 * time.Second) // a slow tool: the text stands still meanwhile
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Run step %d · done", r)})
		d.wait(200 * time.Millisecond)
	}
	d.push(projector.Text{Text: "\n\nThat is all."}, projector.TurnEnd{StopReason: "end_turn"})
	d.settle()
	if !d.ended {
		t.Fatal("the turn's end was not delivered")
	}
	if hidden > 0 {
		t.Errorf("typing was hidden %d times while the turn ran", hidden)
	}
	calls := len(f.requestsMatching("POST", "/typing"))
	if posts := len(f.requestsMatching("POST", "/messages")); calls < posts {
		t.Errorf("%d typing calls for %d posts, want one after each", calls, posts)
	}
	d.wait(time.Minute)
	if after := len(f.requestsMatching("POST", "/typing")); after != calls {
		t.Errorf("%d typing calls after the turn's end, want none", after-calls)
	}
	if f.typingShown(f.thread) {
		t.Error("typing shows after the turn's end")
	}
	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("Discord answered %d requests with 429; want none", n)
	}
}
