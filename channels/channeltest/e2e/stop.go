package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgw/gateway/session"
)

// tickNumber matches the demo agent's "tick N" of ignore-cancel.
var tickNumber = regexp.MustCompile(`tick (\d+)`)

// lastTick returns the highest tick number in ms, 0 if none.
func lastTick(ms []Message) int {
	last := 0
	for _, m := range ms {
		for _, s := range tickNumber.FindAllStringSubmatch(m.Text, -1) {
			if n, _ := strconv.Atoi(s[1]); n > last {
				last = n
			}
		}
	}
	return last
}

// A stop is acknowledged at once: against an agent that ignores the
// cancel, "⚙️ Stopping…" is posted while the turn still runs (it ends
// only after abort.grace, 10 s, when the agent is killed), and then
// edited into the final notice; what the agent says after the stop
// (about 50 more ticks) is not shown.
func testStopIsAcknowledgedAtOnce(t *testing.T, s Setup) {
	g := s.start(t, Config{Access: session.AccessRule{Approvers: []string{s.UserID(Ann)}}})
	th := g.Mention(Ann, "ignore-cancel 60")
	g.WaitText(th, 0, "tick 1")
	g.Say(Ann, th, "stop")
	ack := g.WaitMessage(th, 0, "Stopping…", func(m Message) bool { return strings.HasPrefix(m.Text, "⚙️ Stopping…") })
	shownAtAck := lastTick(g.Messages(th))
	done, cancel := context.WithCancel(g.Ctx())
	cancel()
	if end, ended := g.Ends().Next(done, th); ended {
		t.Fatalf("the turn ended (%+v) before Stopping… showed: the stop was not acknowledged at once", end)
	}
	if got := g.WaitEnd(th); got != "cancelled" {
		t.Errorf("stop reason %q, want cancelled", got)
	}
	final := "Stopped by Ann. The agent did not stop within 10s, so it was restarted."
	g.Wait("Stopping… edited into the final notice", func() bool {
		m, ok := g.Message(th, ack.ID)
		return ok && strings.Contains(m.Text, final)
	})
	// The agent ticked five times a second through the grace; the lane
	// may still deliver what it held at the stop, not what came after.
	if last := lastTick(g.Messages(th)); last > shownAtAck+15 {
		t.Errorf("the thread shows tick %d, %d ticks after Stopping… showed: output after the stop was shown\n%s", last, last-shownAtAck, g.Dump(th))
	}
}
