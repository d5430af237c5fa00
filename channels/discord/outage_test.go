package discord

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/dispatch/dispatchtest"
)

// TestOutageLosesNoText streams an answer through a real lane into the
// real adapter while the fake Discord is down for 5 s or 60 s (answering
// 503, or dropping connections), on a virtual clock: the text in the
// thread afterwards equals the agent's text byte for byte.
func TestOutageLosesNoText(t *testing.T) {
	for _, mode := range []outageMode{outage503, outageDrop} {
		for _, d := range []time.Duration{5 * time.Second, 60 * time.Second} {
			t.Run(fmt.Sprintf("%s/%v", mode, d), func(t *testing.T) {
				f := newFake(t)
				a := f.adapter(t, Options{})
				t.Cleanup(a.http.CloseIdleConnections)
				want := streamThroughOutage(t, a, f, mode, d)
				var got strings.Builder
				for _, m := range f.botMessages(f.thread) {
					if !strings.HasPrefix(m.Content, "🛠️") {
						got.WriteString(m.Content)
					}
				}
				if got.String() != want {
					t.Errorf("the thread shows %d bytes, the agent wrote %d:\n got %q\nwant %q", got.Len(), len(want), got.String(), want)
				}
				f.mu.Lock()
				hits := f.outageHits
				f.mu.Unlock()
				t.Logf("%d messages; %d requests met the outage", len(f.botMessages(f.thread)), hits)
				if hits == 0 {
					t.Error("no request met the outage")
				}
			})
		}
	}
}

// streamThroughOutage streams 400 words through a lane into a while the
// fake is down for d (see dispatchtest.StreamThroughOutage).
func streamThroughOutage(t *testing.T, a *Adapter, f *fakeDiscord, mode outageMode, d time.Duration) string {
	t.Helper()
	return dispatchtest.StreamThroughOutage(t, dispatchtest.Outage{
		Adapter: a, Thread: f.threadRef(), Words: 400, Down: d,
		SetDown: func(down bool) {
			if down {
				f.setOutage(mode)
			} else {
				f.setOutage(outageNone)
			}
		},
	})
}
