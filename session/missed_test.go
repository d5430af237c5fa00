package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/sysmsg"
)

// A cluster edge's catch-up that read more messages than it publishes
// sends a summary (Inbound.Missed); the worker tells the thread, as its
// own catch-up would, runs nothing, and records the last message read as
// the thread's last handled, so that the next catch-up reads after it.
func TestMissedIsTold(t *testing.T) {
	e := newEnv(t, envOptions{shared: true, catchUp: session.CatchUp{Window: time.Hour}})
	th := e.rec.Thread("missed")
	e.say(th, ann, "echo before")
	e.waitEnd(th)
	in := channels.Inbound{Thread: th, Missed: &channels.Missed{N: 12, Max: 10, Complete: true, Last: "m-12"}}
	if err := e.rec.Deliver(e.ctx(), in); err != nil {
		t.Fatal(err)
	}
	want := sysmsg.CatchUpTooMany{N: 12, Max: 10, Complete: true}.Body()
	e.waitOp(th, "the notice", func(op channeltest.Op) bool {
		return op.Op == "send" && strings.Contains(op.Text, want)
	})
	seen, err := e.st.SeenSince(e.ctx(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].MessageID != "m-12" {
		t.Errorf("last seen = %+v, want m-12", seen)
	}
	if n := len(e.messages(th, channels.KindText)); n != 1 {
		t.Errorf("%d answers, want the one before the summary", n)
	}
}
