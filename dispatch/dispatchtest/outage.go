// Package dispatchtest drives a dispatch.Lane on a virtual clock against
// a real adapter, for the adapters' end-to-end tests.
package dispatchtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// Outage says how StreamThroughOutage runs.
type Outage struct {
	Adapter channels.Adapter
	Thread  channels.ThreadRef
	// Words is how many words the agent writes, one every 100 ms of
	// virtual time, with a tool line (started and finished) every 100.
	Words int
	// Down is how long the platform is down, from second 10 on.
	Down time.Duration
	// SetDown takes the platform's fake down (true) or back up (false).
	SetDown func(down bool)
}

// StreamThroughOutage streams an answer through a real lane into
// o.Adapter while the platform is down for o.Down, drives the lane on a
// virtual clock until it is idle, and returns the agent's text. It fails
// t when the lane does not drain, or drains before the outage ended.
func StreamThroughOutage(t testing.TB, o Outage) string {
	t.Helper()
	start := time.Unix(1_700_000_000, 0)
	from, until := start.Add(10*time.Second), start.Add(10*time.Second+o.Down)
	lane := dispatch.NewLane(dispatch.Options{
		Adapter: o.Adapter, Thread: o.Thread, Stream: projector.DefaultSettings(),
		Typing: typing.Config{Mode: typing.ModeNever}, RetryFor: 15 * time.Minute,
	})
	now, next := start, time.Time{}
	down := false
	step := func() {
		if in := !now.Before(from) && now.Before(until); in != down {
			down = in
			o.SetDown(in)
		}
		next = lane.Step(t.Context(), now)
	}
	advance := func(by time.Duration) {
		target := now.Add(by)
		for !next.IsZero() && !next.After(target) {
			now = next
			step()
		}
		now = target
		step()
	}
	var text strings.Builder
	lane.BeginTurn(now)
	for i := range o.Words {
		w := fmt.Sprintf("word%03d ", i)
		if i%37 == 36 {
			w += "\n\n"
		}
		text.WriteString(w)
		lane.Push(now, projector.Text{Text: w})
		if i%100 == 50 {
			id := projector.ToolCallID(fmt.Sprintf("call%d", i))
			lane.Push(now, projector.Tool{ID: id, Text: "🛠️ step · running"})
			advance(100 * time.Millisecond)
			lane.Push(now, projector.Tool{ID: id, Text: "🛠️ step · done"})
		}
		advance(100 * time.Millisecond)
	}
	lane.Push(now, projector.TurnEnd{StopReason: "end_turn"})
	step()
	for i := 0; !next.IsZero(); i++ {
		if i > 10000 {
			t.Fatal("the lane never drained")
		}
		now = next
		step()
	}
	if !lane.Idle() {
		t.Fatal("the lane is not idle")
	}
	if now.Before(until) {
		t.Fatalf("the lane was done at %v, before the outage ended", now.Sub(start))
	}
	return text.String()
}
