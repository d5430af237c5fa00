package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/internal/lanes"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// burst is what a burst of mentions came to.
type burst struct {
	mentions int
	answered int            // threads with the answer in them
	tooMany  map[string]int // 429s the fake answered, by method
	limited  []string       // what they were
	last     time.Duration  // from the burst to the last answer
	floor    time.Duration  // the least time Slack's limits allow for the answers
	starts   int            // chat.startStream calls
	busy     int            // threads told their place
}

// ratio is the time to the last answer against the floor.
func (b burst) ratio() float64 { return b.last.Seconds() / b.floor.Seconds() }

// mentionBurst makes n people mention the app at once in the channels
// given (round robin), on a fake with Slack's tiers and channel limit
// whose minute is minute, and answers each thread through the real
// dispatch lane (typing while the agent works, then the answer, streamed
// natively), as the gateway does. The envelopes go to the adapter's
// inbound path in memory, and its calls to the fake through an in-memory
// transport, so that it runs inside a synctest bubble as well as in real
// time. It waits until every mention has its answer, or until answers
// stop coming for two minutes. before runs once the adapter is ready.
func mentionBurst(t testing.TB, n int, chans []string, minute time.Duration, before func(*fakeSlack)) burst {
	t.Helper()
	f := newFakeState(t, fakeOptions{streams: true, tiers: true, channelLimit: true})
	f.tierState.minute = minute
	for _, c := range chans {
		f.addChannel(c)
	}
	a, err := New(Options{AppToken: f.appToken, BotToken: f.botToken, APIURL: "http://fake.invalid/api/",
		HTTPClient: &http.Client{Transport: handlerTransport{f.handler}}})
	if err != nil {
		t.Fatal(err)
	}
	a.limits.minute = minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		runners []*dispatch.Runner
	)
	h := func(ctx context.Context, in channels.Inbound) {
		lane := dispatch.NewLane(dispatch.Options{
			Adapter: a, Thread: in.Thread, Stream: projector.DefaultSettings(), Typing: typing.DefaultConfig(),
		})
		r := dispatch.Start(ctx, lane)
		r.BeginTurn()
		r.Push(projector.Text{Text: "answer to " + in.Text}, projector.TurnEnd{StopReason: "end_turn"})
		mu.Lock()
		runners = append(runners, r)
		mu.Unlock()
	}
	in := &inbound{ctx: ctx, work: ctx, h: h, lanes: lanes.New()}
	f.sink = func(env map[string]any) {
		payload, err := json.Marshal(env["payload"])
		if err != nil {
			t.Error(err)
			return
		}
		a.queue(in, item{kind: env["type"].(string), payload: payload})
	}
	if before != nil {
		before(f)
	}
	start := time.Now()
	threads := make([]sent, n)
	for i := range threads {
		user := fmt.Sprintf("U%04d", i)
		f.addUser(user, fmt.Sprintf("Person %d", i))
		threads[i] = f.mustSay(ctx, sayOptions{user: user, channel: chans[i%len(chans)], text: fmt.Sprintf("question %d", i), mention: true})
	}
	// answered counts the threads with their answer, and says when the
	// last one started.
	answered := func() (int, time.Time) {
		f.mu.Lock()
		defer f.mu.Unlock()
		shown := map[string]bool{} // threads whose answer a person sees
		for _, m := range f.msgs {
			if m.BotID == f.botID && m.ThreadTS != "" && strings.HasPrefix(m.Text, "answer to ") {
				shown[m.ThreadTS] = true
			}
		}
		var got int
		var last time.Time
		for _, th := range threads {
			if !shown[th.ts] {
				continue
			}
			got++
			// Its answer started with the thread's last chat.startStream.
			for _, c := range slices.Backward(f.calls) {
				if c.Method == "chat.startStream" && c.Form.Get("thread_ts") == th.ts {
					last = later(last, c.At)
					break
				}
			}
		}
		return got, last
	}
	var b burst
	var last time.Time
	for progress := time.Now(); b.answered < n && time.Since(progress) < 2*time.Minute*minute/time.Minute+10*time.Second; {
		time.Sleep(minute / 100) // waiting until all are answered, or none for a while
		if got, at := answered(); got > b.answered {
			b.answered, last, progress = got, at, time.Now()
		}
	}
	cancel()
	in.lanes.Close()
	mu.Lock()
	for _, r := range runners {
		r.Close()
	}
	mu.Unlock()
	b.mentions, b.last = n, last.Sub(start)
	b.tooMany, b.limited = f.tierLimited()
	if f.limitedCount() > 0 {
		b.tooMany["chat.postMessage (channel)"] = f.limitedCount()
	}
	b.starts = len(f.callsTo("chat.startStream")) - b.tooMany["chat.startStream"]
	b.busy = len(f.callsTo("chat.postEphemeral"))
	// The floor: the answers' chat.startStream calls beyond the burst,
	// at Tier 2's rate; and each channel's posts beyond its burst, a
	// second each.
	t2 := fakeTiers["chat.startStream"]
	b.floor = time.Duration(max(b.starts-t2.burst, 0)) * minute / time.Duration(t2.perMinute)
	per := map[string]int{}
	for i := range threads {
		per[chans[i%len(chans)]]++
	}
	for _, k := range per {
		b.floor = max(b.floor, time.Duration(max(k-postBurst, 0))*time.Second)
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func sum(m map[string]int) int {
	var n int
	for _, v := range m {
		n += v
	}
	return n
}

// channelsNamed returns n channel ids.
func channelsNamed(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("C0BURST%02d", i)
	}
	return out
}

// TestMentionBurstLosesNone: 200 people mention the app at once, in one
// channel and across ten, on a Slack with its tiers (chat.startStream, which
// opens each answer, takes 20 a minute) and its post limit per channel.
// Every mention gets its answer, and Slack answers no call with 429: the
// adapter counts the tiers itself and holds each call back until its
// turn. The threads far back in the line are told their place once. In
// virtual time.
func TestMentionBurstLosesNone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chans []string
	}{
		{"one channel", channelsNamed(1)},
		{"ten channels", channelsNamed(10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := mentionBurst(t, 200, tc.chans, time.Minute, nil)
				if b.answered != b.mentions {
					t.Errorf("%d of %d mentions answered", b.answered, b.mentions)
				}
				if n := sum(b.tooMany); n != 0 {
					t.Errorf("Slack answered %d calls with 429 (%v), want none; the first ones:\n%s", n, b.tooMany, strings.Join(b.limited[:min(10, len(b.limited))], "\n"))
				}
				if b.starts != b.mentions {
					t.Errorf("%d chat.startStream calls for %d mentions, want one each", b.starts, b.mentions)
				}
				if b.busy == 0 || b.busy >= b.mentions {
					t.Errorf("%d threads told their place, want those that waited long (more than none, fewer than all)", b.busy)
				}
				t.Logf("%d mentions: last answer after %v, floor %v: %.2f× the floor; %d threads told their place",
					b.mentions, b.last, b.floor, b.ratio(), b.busy)
			})
		})
	}
}

// TestMentionBurstLearnsFromA429: another process of the app spent
// chat.startStream's minute just before a burst of 50 mentions. The
// adapter's first call meets a 429; from its Retry-After on, the others
// wait their turn: one 429 in all, and every mention answered.
func TestMentionBurstLearnsFromA429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mentionBurst(t, 50, channelsNamed(5), time.Minute, func(f *fakeSlack) { f.spend("chat.startStream", time.Now()) })
		if b.answered != b.mentions {
			t.Errorf("%d of %d mentions answered", b.answered, b.mentions)
		}
		if got := b.tooMany["chat.startStream"]; got != 1 {
			t.Errorf("chat.startStream met %d 429s, want the one that taught the limit:\n%s", got, strings.Join(b.limited, "\n"))
		}
		delete(b.tooMany, "chat.startStream")
		if n := sum(b.tooMany); n != 0 {
			t.Errorf("other methods met %d 429s (%v), want none", n, slices.Sorted(maps.Keys(b.tooMany)))
		}
	})
}

// BenchmarkMentionBurst measures a burst of 200 mentions across ten
// channels on the fake with Slack's tiers, in real time (a benchmark
// cannot run in a synctest bubble) with the tiers' minute shortened to
// 2 s so that a run takes seconds, not the nine minutes Tier 2 asks for
// 200 answers: the time to the last answer against the floor the limits
// set (x-floor; the goal is ≤ 1.2), and the answers and 429s. Run it with
// -benchtime=1x.
func BenchmarkMentionBurst(b *testing.B) {
	for b.Loop() {
		r := mentionBurst(b, 200, channelsNamed(10), 2*time.Second, nil)
		b.ReportMetric(r.ratio(), "x-floor")
		b.ReportMetric(r.last.Seconds(), "s-to-last-answer")
		b.ReportMetric(r.floor.Seconds(), "s-floor")
		b.ReportMetric(float64(r.answered), "answered")
		b.ReportMetric(float64(sum(r.tooMany)), "429s")
	}
}
