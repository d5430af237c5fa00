package dispatch_test

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// TestNoticeGoesAheadOfHeldText: an urgent notice does not wait for a
// final_only turn to end.
func TestNoticeGoesAheadOfHeldText(t *testing.T) {
	s := projector.DefaultSettings()
	s.DeliveryMode = projector.DeliveryFinalOnly
	h := newHarness(t, channeltest.Options{Edit: true}, s, never)
	h.lane.BeginTurn(h.now)
	h.push(projector.Text{Text: "held answer"})
	h.lane.Notice(h.now, "", "⚙️ Queued: 1 ahead of it.")
	h.wait(time.Second)
	if got, want := h.ops(), []string{"send m1 ⚙️ Queued: 1 ahead of it."}; !cmp.Equal(got, want) {
		t.Fatalf("before the turn ends (-got +want):\n%s", cmp.Diff(got, want))
	}
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 ⚙️ Queued: 1 ahead of it.", "send m2 held answer", "turn_end"}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

// TestReplaceNotice: a keyed notice is edited into its replacement where
// the channel edits, else the replacement comes in order; replaced before
// it was shown, only the replacement is posted, under the key the edited
// notice ends with (a live thread and its replay end alike whichever came
// first).
func TestReplaceNotice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  bool
		early bool // replaced before the notice was shown
		want  []string
	}{
		{"edit", true, false, []string{"send m1 ⚙️ Stopping…", "send m2 last words", "edit m1 ⚙️ Stopped by Ann.", "turn_end"}},
		{"no edit", false, false, []string{"send m1 ⚙️ Stopping…", "send m2 last words", "send m3 ⚙️ Stopped by Ann.", "turn_end"}},
		{"not shown yet", true, true, []string{"send m1 ⚙️ Stopped by Ann.", "send m2 last words", "turn_end"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, channeltest.Options{Edit: tc.edit}, projector.DefaultSettings(), never)
			h.lane.BeginTurn(h.now)
			h.lane.Notice(h.now, "stop", "⚙️ Stopping…")
			if !tc.early {
				h.wait(time.Second)
			}
			h.lane.Push(h.now, projector.Text{Text: "last words"})
			h.lane.ReplaceNotice(h.now, "stop", "⚙️ Stopped by Ann.")
			h.push(projector.TurnEnd{StopReason: "cancelled"})
			h.drain()
			if got := h.ops(); !cmp.Equal(got, tc.want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, tc.want))
			}
			if !tc.edit {
				return
			}
			for _, m := range h.rec.Messages() {
				if m.Text == "⚙️ Stopped by Ann." && m.Key != "notice:stop" {
					t.Errorf("the stop notice ends with key %q, want %q", m.Key, "notice:stop")
				}
			}
		})
	}
}

// TestSettleNotice: a notice that stopped being true is corrected in
// place where the channel edits; where it cannot, or the notice was not
// shown yet, nothing more is posted (and the early one never is).
func TestSettleNotice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  bool
		early bool // settled before the notice was shown
		want  []string
	}{
		{"edit", true, false, []string{"send m1 ⚙️ Queued: 1 ahead of it.", "send m2 the answer", "edit m1 ⚙️ Was queued; its turn has started.", "turn_end"}},
		{"no edit", false, false, []string{"send m1 ⚙️ Queued: 1 ahead of it.", "send m2 the answer", "turn_end"}},
		{"not shown yet", true, true, []string{"send m1 the answer", "turn_end"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, channeltest.Options{Edit: tc.edit}, projector.DefaultSettings(), never)
			h.lane.Notice(h.now, "queued-m2", "⚙️ Queued: 1 ahead of it.")
			if !tc.early {
				h.wait(time.Second)
			}
			h.lane.SettleNotice(h.now, "queued-m2", "⚙️ Was queued; its turn has started.")
			h.lane.BeginTurn(h.now)
			h.lane.Push(h.now, projector.Text{Text: "the answer"})
			h.push(projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			if got := h.ops(); !cmp.Equal(got, tc.want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, tc.want))
			}
		})
	}
}
