package slack

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch/dispatchtest"
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

// streamThroughOutage streams 600 words through a lane into a while the
// fake is down for d (see dispatchtest.StreamThroughOutage).
func streamThroughOutage(t *testing.T, a channels.Adapter, f *fakeSlack, mode outageMode, d time.Duration) string {
	t.Helper()
	return dispatchtest.StreamThroughOutage(t, dispatchtest.Outage{
		Adapter: a, Thread: channels.ThreadRef{Platform: Platform, Channel: fakeChannel, Thread: fakeThread}, Words: 600, Down: d,
		SetDown: func(down bool) {
			if down {
				f.setOutage(mode)
			} else {
				f.setOutage(outageNone)
			}
		},
	})
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
