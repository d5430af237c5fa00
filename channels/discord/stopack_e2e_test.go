package discord

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// tickNumber matches the demo agent's "tick N" of ignore-cancel.
var tickNumber = regexp.MustCompile(`tick (\d+)`)

// lastTick returns the highest tick number in the bot's messages in
// channel, 0 if none.
func lastTick(ms []fakeMessage) int {
	last := 0
	for _, m := range ms {
		for _, s := range tickNumber.FindAllStringSubmatch(m.Content, -1) {
			if n, _ := strconv.Atoi(s[1]); n > last {
				last = n
			}
		}
	}
	return last
}

// On Discord a stop is acknowledged at once: against an agent that
// ignores the cancel, "⚙️ Stopping…" is posted while the turn still runs
// (it ends only after abort.grace, 10 s, when the agent is killed), and
// then edited into the final notice; what the agent says after the stop
// (about 50 more ticks) is not shown.
func TestStopIsAcknowledgedAtOnce(t *testing.T) {
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}})
	ctx := testCtx(t)
	id := f.say(ann, f.channel, "ignore-cancel 60", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	f.waitFor(ctx, "a tick", func() bool { return lastTick(f.botMessagesLocked(id)) > 0 })
	f.say(ann, id, "stop", false)
	var ack fakeMessage
	f.waitFor(ctx, "Stopping…", func() bool {
		for _, m := range f.botMessagesLocked(id) {
			if strings.HasPrefix(m.Content, "⚙️ Stopping…") {
				ack = m
				return true
			}
		}
		return false
	})
	shownAtAck := lastTick(f.botMessages(id))
	done, cancel := context.WithCancel(ctx)
	cancel()
	if end, ended := g.ends.Next(done, th); ended {
		t.Fatalf("the turn ended (%+v) before Stopping… showed: the stop was not acknowledged at once", end)
	}
	if got := g.waitEnd(th); got != "cancelled" {
		t.Errorf("stop reason %q, want cancelled", got)
	}
	final := "Stopped by Ann. The agent did not stop within 10s, so it was restarted."
	f.waitFor(ctx, "Stopping… edited into the final notice", func() bool {
		m, ok := f.msgs[ack.ID]
		return ok && strings.Contains(m.Content, final)
	})
	// The agent ticked five times a second through the grace; the lane
	// may still deliver what it held at the stop, not what came after.
	if last := lastTick(f.botMessages(id)); last > shownAtAck+15 {
		t.Errorf("the thread shows tick %d, %d ticks after Stopping… showed: output after the stop was shown\n%s", last, last-shownAtAck, g.dump(id))
	}
}
