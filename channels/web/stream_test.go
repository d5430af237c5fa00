package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// limited is the web adapter with other limits, to compare edit paces.
type limited struct {
	*Adapter
	limits channels.Limits
}

func (l limited) Limits() channels.Limits { return l.limits }

// streamReply streams a reply of chunks pieces of chunk each, one every
// every, through a lane of each of threads on virtual time, and returns
// the edits the threads' last messages had.
func streamReply(tb testing.TB, ad channels.Adapter, a *Adapter, threads []string, chunks int, chunk string, every time.Duration) int {
	tb.Helper()
	now := time.Unix(0, 0)
	lanes := make([]*dispatch.Lane, len(threads))
	next := make([]time.Time, len(threads))
	for i, id := range threads {
		lanes[i] = dispatch.NewLane(dispatch.Options{Adapter: ad, Thread: ref(id), Stream: projector.DefaultSettings(), Typing: typing.Config{Mode: typing.ModeNever}})
	}
	step := func(until time.Time) {
		for i, l := range lanes {
			for !next[i].IsZero() && !next[i].After(until) {
				next[i] = l.Step(tb.Context(), next[i])
			}
		}
	}
	for range chunks {
		for i, l := range lanes {
			l.Push(now, projector.Text{Text: chunk})
			next[i] = l.Step(tb.Context(), now)
		}
		now = now.Add(every)
		step(now)
	}
	for i, l := range lanes {
		l.Push(now, projector.TurnEnd{StopReason: "end_turn"})
		next[i] = l.Step(tb.Context(), now)
	}
	step(now.Add(time.Hour))
	edits := 0
	for _, id := range threads {
		ms, _, err := a.st.messages(id)
		if err != nil || len(ms) == 0 {
			tb.Fatalf("thread %s: %v, %d messages", id, err, len(ms))
		}
		last := ms[len(ms)-1]
		if want := strings.Repeat(chunk, chunks); strings.TrimSpace(last.Text) != strings.TrimSpace(want) {
			tb.Fatalf("thread %s shows %q…, want the whole reply", id, last.Text[:min(len(last.Text), 40)])
		}
		edits += last.Edits
	}
	return edits
}

// A reply streams into the web chat as its text comes: an edit for each
// piece that arrives 40 ms after the last (Discord's pace, an edit a
// second, or the earlier 250 ms, showed it in steps), the page showing
// them once per animation frame.
func TestWebStreamsAsTextComes(t *testing.T) {
	a := New(Options{})
	th := a.st.mustCreate("stream").ID
	const chunks = 50
	edits := streamReply(t, a, a, []string{th}, chunks, "word ", 40*time.Millisecond)
	if edits < chunks-2 {
		t.Errorf("%d pieces 40 ms apart made %d edits, want one a piece (the page coalesces per frame)", chunks, edits)
	}
	old := a.st.mustCreate("stream at 250 ms").ID
	if e := streamReply(t, limited{a, channels.Limits{MinEditInterval: 250 * time.Millisecond}}, a, []string{old}, chunks, "word ", 40*time.Millisecond); e >= edits/3 {
		t.Errorf("at 250 ms the same reply made %d edits, %d now: the measure does not tell them apart", e, edits)
	}
}

// BenchmarkStream100Threads: 100 threads stream a 2,000-character reply
// each (10 characters every 40 ms) into the web adapter, at the web
// chat's pace and at the earlier 250 ms; ns/char is the adapter's CPU
// (rendering, storing, publishing) per streamed character.
func BenchmarkStream100Threads(b *testing.B) {
	for _, pace := range []struct {
		name  string
		limit time.Duration
	}{{"now", Limits().MinEditInterval}, {"250ms", 250 * time.Millisecond}} {
		b.Run(pace.name, func(b *testing.B) {
			b.ReportAllocs()
			edits := 0
			for b.Loop() {
				b.StopTimer()
				a := New(Options{})
				threads := make([]string, 100)
				for i := range threads {
					threads[i] = a.st.mustCreate(fmt.Sprint("t", i)).ID
				}
				b.StartTimer()
				edits += streamReply(b, limited{a, channels.Limits{MinEditInterval: pace.limit, MaxUploadBytes: maxUploadBytes}}, a, threads, 200, "some text ", 40*time.Millisecond)
			}
			chars := float64(b.N) * 100 * 2000
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/chars, "ns/char")
			b.ReportMetric(float64(edits)/float64(b.N)/100, "edits/reply")
		})
	}
}
