package dispatchtest

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// Stream streams an answer through a real lane into a, one chunk every
// 20 ms of virtual time as an agent writes it, ends the turn, and drives
// the lane on its virtual clock until it is idle. It fails t when the
// lane does not drain.
func Stream(t testing.TB, a channels.Adapter, thread channels.ThreadRef, chunks []string) {
	t.Helper()
	lane := dispatch.NewLane(dispatch.Options{
		Adapter: a, Thread: thread, Stream: projector.DefaultSettings(),
		Typing: typing.Config{Mode: typing.ModeNever},
	})
	now, next := time.Unix(1_700_000_000, 0), time.Time{}
	step := func() { next = lane.Step(t.Context(), now) }
	lane.BeginTurn(now)
	for _, c := range chunks {
		lane.Push(now, projector.Text{Text: c})
		step()
		target := now.Add(20 * time.Millisecond)
		for !next.IsZero() && !next.After(target) {
			now = next
			step()
		}
		now = target
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
}
