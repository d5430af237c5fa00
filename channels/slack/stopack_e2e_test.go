package slack

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tickNumber matches the demo agent's "tick N" of ignore-cancel.
var tickNumber = regexp.MustCompile(`tick (\d+)`)

// lastTick returns the highest tick number in ms, 0 if none.
func lastTick(ms []fakeMessage) int {
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

// On Slack a stop is acknowledged at once: against an agent that ignores
// the cancel, "Stopping…" is posted while the turn still runs (it ends
// only after abort.grace, 10 s, when the agent is killed), and then edited
// into the final notice; what the agent says after the stop (about 50
// more ticks) is not shown.
func TestStopIsAcknowledgedAtOnce(t *testing.T) {
	g := newGateway(t)
	s := g.say(ann, "", "ignore-cancel 60", true)
	th := ref(fakeChannel, s.ts)
	g.waitMessage(th, "", "tick 1")
	g.say(ann, s.ts, "stop", false)
	ack := g.waitMessage(th, "", "Stopping…")
	shownAtAck := lastTick(g.messages(th))
	done, cancel := context.WithCancel(g.ctx())
	cancel()
	if end, ended := g.ends.Next(done, th); ended {
		t.Fatalf("the turn ended (%+v) before Stopping… showed: the stop was not acknowledged at once", end)
	}
	if end := g.waitEnd(th); end.StopReason != "cancelled" {
		t.Errorf("stop reason %q, want cancelled", end.StopReason)
	}
	final := "Stopped by Ann. The agent did not stop within 10s, so it was restarted."
	err := g.f.waitFor(g.ctx(), "Stopping… edited into the final notice", func() bool {
		for _, m := range g.f.msgs {
			if m.Channel == th.Channel && m.TS == ack.TS {
				return strings.Contains(m.Text, final)
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("%v; thread:\n%s", err, g.dump(th))
	}
	// The agent ticked five times a second through the grace; the lane
	// may still deliver what it held at the stop, not what came after.
	if last := lastTick(g.messages(th)); last > shownAtAck+15 {
		t.Errorf("the thread shows tick %d, %d ticks after Stopping… showed: output after the stop was shown\n%s", last, last-shownAtAck, g.dump(th))
	}
}
