package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// errUnreachable is what a call returns while the fake platform is down:
// neither a rate limit nor a permanent error.
var errUnreachable = errors.New("dial tcp 127.0.0.1:443: connect: connection refused")

// flaky is a recording platform that cannot be reached while down says
// so; it counts the calls that failed.
type flaky struct {
	rec    *channeltest.Recorder
	down   func() bool
	failed int
}

func (f *flaky) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	return f.rec.Adapter().Run(ctx, h)
}

func (f *flaky) Limits() channels.Limits { return f.rec.Adapter().Limits() }

func (f *flaky) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	if f.down() {
		f.failed++
		return channels.Handle{}, errUnreachable
	}
	return f.rec.Adapter().Post(ctx, t, m)
}

func (f *flaky) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	if f.down() {
		f.failed++
		return errUnreachable
	}
	return f.rec.Adapter().(channels.Editor).Edit(ctx, h, m)
}

func (f *flaky) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	if f.down() {
		f.failed++
		return channels.Handle{}, errUnreachable
	}
	return f.rec.Adapter().(channels.Prompter).Prompt(ctx, t, c)
}

// newOutageHarness is newHarness on a platform that is down from
// virtual second from (inclusive) to until (exclusive).
func newOutageHarness(t *testing.T, settings projector.Settings, retryFor time.Duration, from, until time.Duration) (*harness, *flaky) {
	rec := channeltest.New(channeltest.Options{Edit: true, Prompt: true, Limits: channels.Limits{MaxMessageChars: 2000}})
	h := &harness{t: t, rec: rec, now: time.Unix(0, 0)}
	start := h.now
	f := &flaky{rec: rec}
	f.down = func() bool {
		d := h.now.Sub(start)
		return d >= from && d < until
	}
	h.lane = dispatch.NewLane(dispatch.Options{
		Adapter: f, Thread: rec.Thread("t"), Stream: settings, Typing: never, RetryFor: retryFor,
		OnTurnEnd: func(e projector.TurnEnd) { rec.Note(channeltest.Op{Op: "turn_end", StopReason: e.StopReason}) },
	})
	return h, f
}

// text returns the concatenated text messages in the thread.
func delivered(rec *channeltest.Recorder) string {
	var b strings.Builder
	for _, m := range rec.Messages() {
		if m.Kind == channels.KindText {
			b.WriteString(m.Text)
		}
	}
	return b.String()
}

func TestOutage(t *testing.T) {
	const minute = time.Minute
	for _, tc := range []struct {
		name     string
		mode     string // deliveryMode
		retryFor time.Duration
		down     [2]time.Duration // from, until
		want     []string
		// wantAt is when the last op is delivered (virtual time since
		// the start); zero: not checked.
		wantAt time.Duration
	}{
		{
			// The platform is back after 5 s: the answer arrives whole, in
			// order, the tool line's later state as an edit of its
			// message, nothing told since nothing was lost.
			name: "short outage", down: [2]time.Duration{2 * time.Second, 7 * time.Second}, retryFor: 15 * minute,
			want: []string{
				"send m1 Let me look.",
				"send m2 🛠️ ls · running",
				"edit m2 🛠️ ls · done",
				"send m3 Found 3 files. The second is new.",
				"turn_end",
			},
		},
		{
			// A 60 s outage is waited out too; the retries back off (1 s
			// doubling to 30 s), so the answer lands at most 30 s late.
			name: "minute outage", down: [2]time.Duration{2 * time.Second, 62 * time.Second}, retryFor: 15 * minute,
			want: []string{
				"send m1 Let me look.",
				"send m2 🛠️ ls · running",
				"edit m2 🛠️ ls · done",
				"send m3 Found 3 files. The second is new.",
				"turn_end",
			},
		},
		{
			name: "final only", mode: projector.DeliveryFinalOnly, down: [2]time.Duration{0, 40 * time.Second}, retryFor: 15 * minute,
			want: []string{
				"send m1 Let me look.",
				"send m2 🛠️ ls · done",
				"send m3 Found 3 files. The second is new.",
				"turn_end",
			},
		},
		{
			// Longer than retryFor: what piled up (the tool line's edit
			// and the text) is given up, and the thread is told once the
			// platform is back, before the turn's end.
			name: "given up", down: [2]time.Duration{2 * time.Second, 20 * minute}, retryFor: 10 * minute,
			want: []string{
				"send m1 Let me look.",
				"send m2 🛠️ ls · running",
				"send m3 ⚙️ 2 messages (45 characters) could not be delivered: the chat platform could not be reached, and the gateway gave up trying.",
				"turn_end",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := projector.DefaultSettings()
			if tc.mode != "" {
				s.DeliveryMode = tc.mode
			}
			h, f := newOutageHarness(t, s, tc.retryFor, tc.down[0], tc.down[1])
			h.lane.BeginTurn(h.now)
			h.push(projector.Text{Text: "Let me look."}, tool("c1", "🛠️ ls · running"))
			h.wait(3 * time.Second)
			h.push(tool("c1", "🛠️ ls · still running"))
			h.wait(time.Second)
			h.push(tool("c1", "🛠️ ls · done"), projector.Text{Text: "Found 3 files."})
			h.wait(time.Second)
			h.push(projector.Text{Text: " The second is new."}, projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			if got := h.ops(); !cmp.Equal(got, tc.want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, tc.want))
			}
			if f.failed == 0 {
				t.Error("no call failed: the outage did not happen")
			}
			if late := h.now.Sub(time.Unix(0, 0)) - tc.down[1]; late > 30*time.Second {
				t.Errorf("the lane was done %v after the platform came back, want at most the 30 s backoff cap", late)
			}
			if !h.lane.Idle() {
				t.Error("the lane is not idle")
			}
		})
	}
}

// TestOutageGivenUpThenMoreOutput: after a give-up, output that comes once
// the platform is back is delivered after the loss notice.
func TestOutageGivenUpThenMoreOutput(t *testing.T) {
	h, _ := newOutageHarness(t, projector.DefaultSettings(), 5*time.Minute, 0, 6*time.Minute)
	h.lane.BeginTurn(h.now)
	h.push(projector.Text{Text: "lost words"})
	h.wait(7 * time.Minute)
	h.push(projector.Text{Text: " and more"}, projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{
		"send m1 ⚙️ 1 message (10 characters) could not be delivered: the chat platform could not be reached, and the gateway gave up trying.",
		"send m2  and more",
		"turn_end",
	}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

// TestPromptInOutage: a prompt waits out an outage like any output; one
// that cannot be shown before the lane gives up is reported at the give-up
// (not after the prompt's own timeout), and one the platform refuses at
// once.
func TestPromptInOutage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		down    time.Duration
		refuse  bool
		wantErr bool
		wantAt  time.Duration // when posted is called
	}{
		{name: "shown after the outage", down: 40 * time.Second, wantAt: 46 * time.Second},
		{name: "given up", down: time.Hour, wantErr: true, wantAt: 2 * time.Minute},
		{name: "refused", refuse: true, wantErr: true, wantAt: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newOutageHarness(t, projector.DefaultSettings(), 2*time.Minute, 0, tc.down)
			if tc.refuse {
				h.rec.Inject(channeltest.InjectPrompt, channels.Permanent(errors.New("50035 invalid form body")))
			}
			var calls int
			var err error
			var at time.Duration
			h.lane.BeginTurn(h.now)
			h.lane.Prompt(h.now, "p1", choice, func(_ channels.Handle, e error) {
				calls++
				err, at = e, h.now.Sub(time.Unix(0, 0))
			})
			h.wait(0)
			for i := 0; calls == 0 && !h.next.IsZero(); i++ {
				if i > 1000 {
					t.Fatal("the prompt was never settled")
				}
				h.now = h.next
				h.next = h.lane.Step(t.Context(), h.now)
			}
			if calls != 1 || (err != nil) != tc.wantErr {
				t.Fatalf("posted called %d times with %v, want once with an error: %v", calls, err, tc.wantErr)
			}
			if at < tc.wantAt || at > tc.wantAt+30*time.Second {
				t.Errorf("posted called at %v, want at %v (+ one backoff)", at, tc.wantAt)
			}
		})
	}
}

// TestRefusedNoticeDoesNotLoop: where everything is refused (the channel
// is gone), the loss notice is tried once and the lane drains.
func TestRefusedNoticeDoesNotLoop(t *testing.T) {
	h := newHarness(t, channeltest.Options{}, projector.DefaultSettings(), never)
	for range 2 {
		h.rec.Inject(channeltest.InjectPost, channels.Permanent(errors.New("10003 unknown channel")))
	}
	h.push(projector.Status{Text: "one"}, projector.Status{Text: "two"})
	h.drain()
	if got, want := h.ops(), []string{"send m1 two"}; !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	if n := len(h.rec.Attempts()); n != 3 {
		t.Errorf("%d attempts, want the refused post, the refused notice and the next post", n)
	}
}
