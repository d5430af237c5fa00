package slack

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// TestOutageLosesNoText streams an answer through a real lane into the
// real adapter while the fake Slack is down for 5 s or 60 s (answering
// 503, or dropping connections), on a virtual clock: the text in the
// thread afterwards equals the agent's text byte for byte.
func TestOutageLosesNoText(t *testing.T) {
	for _, mode := range []outageMode{outage503, outageDrop} {
		for _, d := range []time.Duration{5 * time.Second, 60 * time.Second} {
			t.Run(fmt.Sprintf("%s/%v", mode, d), func(t *testing.T) {
				f := newFake(t, fakeOptions{})
				a := &handedIn{Adapter: f.adapter(t, Options{}), texts: map[channels.MessageID]string{}}
				want := streamThroughOutage(t, a, f, mode, d)
				// Slack shows what the lane handed in, converted to
				// mrkdwn (which trims spaces at line ends), so the
				// byte-for-byte comparison is of what was handed in,
				// and each message in the fake must show exactly that.
				msgs := f.thread(fakeChannel, fakeThread)
				var got strings.Builder
				for _, m := range msgs {
					in, ok := a.texts[channels.MessageID(m.TS)]
					if !ok {
						t.Fatalf("message %s was not posted through the adapter", m.TS)
					}
					if m.Text != Mrkdwn(in) {
						t.Errorf("message %s shows %q, the adapter was given %q", m.TS, m.Text, in)
					}
					if !strings.HasPrefix(in, "🛠️") {
						got.WriteString(in)
					}
				}
				if got.String() != want {
					t.Errorf("the thread shows %d bytes, the agent wrote %d:\n got %q\nwant %q", got.Len(), len(want), got.String(), want)
				}
				f.mu.Lock()
				hits := f.outageHits
				f.mu.Unlock()
				t.Logf("%d messages; %d calls met the outage", len(msgs), hits)
				if hits == 0 {
					t.Error("no call met the outage")
				}
			})
		}
	}
}

// streamThroughOutage pushes 600 words (a tool line every 100) into a lane
// on a, one word every 100 ms of virtual time, with the fake down from
// second 10 for d, and drives the lane until it is idle. It returns the
// agent's text.
func streamThroughOutage(t *testing.T, a channels.Adapter, f *fakeSlack, mode outageMode, d time.Duration) string {
	t.Helper()
	start := time.Unix(1_700_000_000, 0)
	from, until := start.Add(10*time.Second), start.Add(10*time.Second+d)
	lane := dispatch.NewLane(dispatch.Options{
		Adapter: a, Thread: channels.ThreadRef{Platform: Platform, Channel: fakeChannel, Thread: fakeThread},
		Stream: projector.DefaultSettings(), Typing: typing.Config{Mode: typing.ModeNever}, RetryFor: 15 * time.Minute,
	})
	now, next := start, time.Time{}
	down := false
	step := func() {
		if in := !now.Before(from) && now.Before(until); in != down {
			down = in
			if in {
				f.setOutage(mode)
			} else {
				f.setOutage(outageNone)
			}
		}
		next = lane.Step(t.Context(), now)
	}
	advance := func(by time.Duration) {
		target := now.Add(by)
		for !next.IsZero() && !next.After(target) {
			now = next
			step()
		}
		now = target
		step()
	}
	var text strings.Builder
	lane.BeginTurn(now)
	for i := range 600 {
		w := fmt.Sprintf("word%03d ", i)
		if i%37 == 36 {
			w += "\n\n"
		}
		text.WriteString(w)
		lane.Push(now, projector.Text{Text: w})
		if i%100 == 50 {
			id := projector.ToolCallID(fmt.Sprintf("call%d", i))
			lane.Push(now, projector.Tool{ID: id, Text: "🛠️ step · running"})
			advance(100 * time.Millisecond)
			lane.Push(now, projector.Tool{ID: id, Text: "🛠️ step · done"})
		}
		advance(100 * time.Millisecond)
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
	if now.Before(until) {
		t.Fatalf("the lane was done at %v, before the outage ended", now.Sub(start))
	}
	return text.String()
}

// handedIn is the adapter, remembering the text of each message as the
// lane last handed it in successfully.
type handedIn struct {
	*Adapter
	texts map[channels.MessageID]string
}

func (h *handedIn) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	hd, err := h.Adapter.Post(ctx, t, m)
	if err == nil {
		h.texts[hd.ID] = m.Text
	}
	return hd, err
}

func (h *handedIn) Edit(ctx context.Context, hd channels.Handle, m channels.Message) error {
	err := h.Adapter.Edit(ctx, hd, m)
	if err == nil {
		h.texts[hd.ID] = m.Text
	}
	return err
}
