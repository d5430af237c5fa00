package slack

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
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

// TestEndToEndStopWithoutStreaming: with streaming: edits in a workspace
// that has Slack's agent surface, a running turn still has the status
// line (working, then waiting for the approval while a prompt is open)
// and Slack's Stop button (its agent session is processing, with no
// stream), and a click on Stop stops the turn; the button goes when the
// turn ends.
func TestEndToEndStopWithoutStreaming(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{adapter: Options{Streaming: StreamingEdits}}, fakeOptions{streams: true})
	f := g.f
	stopShown := func(th channels.ThreadRef, want bool) {
		t.Helper()
		err := f.waitFor(g.ctx(), fmt.Sprintf("Slack's Stop button shown: %v", want), func() bool { return f.stopShownLocked(th.Channel, th.Thread) == want })
		if err != nil {
			t.Fatal(err)
		}
	}

	s := g.say(ann, "", "slow 400", true)
	th := ref(fakeChannel, s.ts)
	g.waitMessage(th, "", "the quick brown")
	stopShown(th, true)
	// (Waited for: the status line is the lane's typing, which may come
	// after the agent session's Stop button under load.)
	if err := f.waitFor(g.ctx(), "the status line while the turn runs", func() bool { return f.statusShownLocked(th.Channel, th.Thread) }); err != nil {
		t.Error(err)
	}
	if err := f.stopButton(g.ctx(), ann, th.Channel, th.Thread); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("turn after Stop ended %+v, want cancelled", end)
	}
	g.waitMessage(th, "", "Stopped by Ann.")
	stopShown(th, false)

	// While a permission prompt is open the line says so, and Stop is
	// still there.
	since := g.mark(th)
	g.say(ann, s.ts, "permission", false)
	prompt := g.waitMessage(th, since, "Permission needed")
	err := f.waitFor(g.ctx(), "the status line waiting for the approval", func() bool {
		return f.status[th.Channel+"/"+th.Thread].text == waitingText
	})
	if err != nil {
		t.Fatal(err)
	}
	stopShown(th, true)
	if _, err := f.click(g.ctx(), ann, th.Channel, prompt.TS, button(t, prompt, "/allow_once")); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("permission turn ended %+v", end)
	}
	stopShown(th, false)
	if n := len(f.callsTo("chat.startStream")); n != 0 {
		t.Errorf("streaming: edits started %d streams", n)
	}
}
