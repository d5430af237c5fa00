package slack

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestEndToEndNativeStreamsExpire: through the session router and the
// demo agent, with streams Slack closes at random appends, each turn's
// delivered text is the agent's text, nothing lost or doubled: the text
// of a closed stream goes on in a posted message.
func TestEndToEndNativeStreamsExpire(t *testing.T) {
	g := newGateway(t, fakeOptions{streams: true, stream: fakeStreams{expire: rand.New(rand.NewPCG(16, 7)), expireP: 0.25}})
	f := g.f
	s := g.say(ann, "", "slow 60", true)
	th := ref(fakeChannel, s.ts)
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("first turn ended %+v", end)
	}
	for _, n := range []int{120, 40} {
		before := len(g.messages(th))
		g.say(ann, s.ts, "slow "+strconv.Itoa(n), false)
		if end := g.waitEnd(th); end.StopReason != "end_turn" {
			t.Fatalf("slow %d ended %+v", n, end)
		}
		var b strings.Builder
		for _, m := range g.messages(th)[before:] {
			b.WriteString(m.Text)
		}
		if got, want := strings.Join(strings.Fields(b.String()), " "), strings.TrimSpace(slowWords(n)); got != want {
			t.Errorf("slow %d delivered %q, want %q", n, got, want)
		}
	}
	expired := 0
	for _, m := range g.messages(th) {
		if m.Stream != nil && m.Stream.expired {
			expired++
		}
	}
	if expired == 0 || len(f.callsTo("chat.appendStream")) == 0 {
		t.Fatalf("%d streams expired in %d appends: the test shows nothing", expired, len(f.callsTo("chat.appendStream")))
	}
}
