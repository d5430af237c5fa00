package projector

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/sysmsg"
	"github.com/google/go-cmp/cmp"
)

// TestStopTurn: a turn someone stopped ends with who stopped it, in order
// after its finalised tools and before the TurnEnd, whatever the agent
// answered to the cancel (a stopReason or an error); the next turn ends
// as usual again.
func TestStopTurn(t *testing.T) {
	for _, tc := range []struct {
		stop, err string
		s         sysmsg.Stopped
		notice    string
	}{
		{"cancelled", "", sysmsg.Stopped{By: "Ann"}, "⚙️ Stopped by Ann."},
		{"end_turn", "", sysmsg.Stopped{By: "Bob", Interrupt: true}, "⚙️ Interrupted by a new message from Bob."},
		{"", "its process exited", sysmsg.Stopped{By: "Ann", Killed: true, Grace: 10 * time.Second}, "⚙️ Stopped by Ann. The agent did not stop within 10s, so it was restarted."},
	} {
		p := New(DefaultSettings())
		out := p.BeginTurn(nil)
		out = p.Apply(msg("Working"), out)
		out = p.Apply(toolCall("r", "make", "execute", "in_progress", `{"command":"make"}`), out)
		p.StopTurn(sysmsg.Stopped{By: "someone else"})
		p.StopTurn(tc.s) // the last counts
		out = p.EndTurn(tc.stop, tc.err, out)
		want := []string{"text:Working", "tool:r:🛠️ make · running", "tool:r:🛠️ make · cancelled", "notice:" + tc.notice, "end:" + tc.stop + tc.err}
		if got := brief(out); !cmp.Equal(got, want) {
			t.Errorf("%s%s (-got +want):\n%s", tc.stop, tc.err, cmp.Diff(got, want))
		}
		if n, ok := out[len(out)-2].(Notice); !ok || n.Reason != NoticeTurnStopped {
			t.Errorf("%s%s: the stop notice is %#v, want a Notice with NoticeTurnStopped", tc.stop, tc.err, out[len(out)-2])
		}
		if got := brief(runOn(p, "cancelled")); !cmp.Equal(got, []string{"notice:⚙️ Stopped.", "end:cancelled"}) {
			t.Errorf("the next turn, not stopped: %v", got)
		}
	}
	// Outside a turn, a stop changes nothing.
	p := New(DefaultSettings())
	p.StopTurn(sysmsg.Stopped{By: "Ann"})
	if got := brief(runOn(p, "end_turn")); !cmp.Equal(got, []string{"end:end_turn"}) {
		t.Errorf("a stop before the turn began: %v", got)
	}
}
