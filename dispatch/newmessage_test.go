package dispatch_test

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// TestNewMessageStartsAChatMessage: text marked NewMessage (a new agent
// message, a send_message post) does not run on in the chat message
// before it, whether that one is already shown (a draft being edited)
// or still queued, in draft and in block mode.
func TestNewMessageStartsAChatMessage(t *testing.T) {
	for _, edit := range []bool{true, false} {
		for _, queued := range []bool{false, true} {
			h := newHarness(t, channeltest.Options{Edit: edit}, projector.DefaultSettings(), never)
			h.lane.BeginTurn(h.now)
			if queued {
				h.lane.Push(h.now, projector.Text{Text: "Looking."})
			} else {
				h.push(projector.Text{Text: "Looking."})
				h.wait(5 * time.Second)
			}
			h.push(projector.Text{Text: "Posted.", NewMessage: true}, projector.Text{Text: "Back", NewMessage: true}, projector.Text{Text: " again."}, projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			want := []string{"send m1 Looking.", "send m2 Posted.", "send m3 Back again.", "turn_end"}
			if got := h.ops(); !cmp.Equal(got, want) {
				t.Errorf("edit=%v queued=%v (-got +want):\n%s", edit, queued, cmp.Diff(got, want))
			}
		}
	}
}
