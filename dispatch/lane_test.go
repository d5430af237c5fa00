package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
	"github.com/google/go-cmp/cmp"
)

// harness drives a Lane on virtual time.
type harness struct {
	t    *testing.T
	rec  *channeltest.Recorder
	lane *dispatch.Lane
	now  time.Time
	next time.Time
}

func newHarness(t *testing.T, o channeltest.Options, s projector.Settings, tc typing.Config) *harness {
	rec := channeltest.New(o)
	h := &harness{t: t, rec: rec, now: time.Unix(0, 0)}
	h.lane = dispatch.NewLane(dispatch.Options{
		Adapter: rec.Adapter(), Thread: rec.Thread("t"), Stream: s, Typing: tc,
		OnTurnEnd: func(e projector.TurnEnd) { rec.Note(channeltest.Op{Op: "turn_end", StopReason: e.StopReason}) },
	})
	return h
}

func (h *harness) push(outs ...projector.Output) {
	h.lane.Push(h.now, outs...)
	h.next = h.lane.Step(h.t.Context(), h.now)
}

// wait advances virtual time by d, running what falls due.
func (h *harness) wait(d time.Duration) {
	target := h.now.Add(d)
	for !h.next.IsZero() && !h.next.After(target) {
		h.now = h.next
		h.next = h.lane.Step(h.t.Context(), h.now)
	}
	h.now = target
	h.next = h.lane.Step(h.t.Context(), h.now)
}

func (h *harness) drain() {
	for i := 0; !h.next.IsZero(); i++ {
		if i > 10000 {
			h.t.Fatal("lane never drained")
		}
		h.now = h.next
		h.next = h.lane.Step(h.t.Context(), h.now)
	}
}

func (h *harness) ops() []string {
	var r []string
	for _, op := range h.rec.Ops() {
		s := op.Op
		if op.Msg != "" {
			s += " " + string(op.Msg)
		}
		if op.State != "" {
			s += " " + op.State
		}
		if op.Text != "" {
			s += " " + op.Text
		}
		r = append(r, s)
	}
	return r
}

func tool(id, text string) projector.Tool {
	return projector.Tool{ID: projector.ToolCallID(id), Text: text}
}

var never = typing.Config{Mode: typing.ModeNever}

func TestEditInPlace(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true}, projector.DefaultSettings(), never)
	h.lane.BeginTurn(h.now)
	h.push(tool("c1", "🛠️ ls · running"))
	h.wait(2 * time.Second)
	h.push(tool("c1", "🛠️ ls · done"), projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 🛠️ ls · running", "edit m1 🛠️ ls · done", "turn_end"}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestEditFallsBackToNewMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"message gone", fmt.Errorf("archived: %w", channels.ErrMessageGone)},
		{"refused for good", channels.Permanent(errors.New("400 invalid form body"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, channeltest.Options{Edit: true}, projector.DefaultSettings(), never)
			h.lane.BeginTurn(h.now)
			h.push(tool("c1", "running"))
			h.wait(2 * time.Second)
			h.rec.Inject(channeltest.InjectEdit, tc.err)
			h.push(tool("c1", "done"), projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			want := []string{"send m1 running", "send m2 done", "turn_end"}
			if got := h.ops(); !cmp.Equal(got, want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
			}
		})
	}
}

// idless posts but returns no message id.
type idless struct{ channels.Adapter }

func (a idless) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	_, err := a.Adapter.Post(ctx, t, m)
	return channels.Handle{Thread: t}, err
}

func (a idless) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return errors.New("edit must not be called without a message id")
}

func TestNoMessageIDMeansNewMessages(t *testing.T) {
	rec := channeltest.New(channeltest.Options{})
	lane := dispatch.NewLane(dispatch.Options{Adapter: idless{rec.Adapter()}, Thread: rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never})
	now := time.Unix(0, 0)
	lane.Push(now, tool("c1", "running"))
	lane.Step(t.Context(), now)
	now = now.Add(5 * time.Second)
	lane.Push(now, tool("c1", "done"))
	lane.Step(t.Context(), now)
	var got []string
	for _, a := range rec.Attempts() {
		got = append(got, a.Op+" "+a.Text+a.Error)
	}
	if want := []string{"send running", "send done"}; !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestRateLimitCoalescesEditsAndKeepsOrder(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true}, projector.DefaultSettings(), never)
	h.lane.BeginTurn(h.now)
	h.push(tool("c1", "🛠️ a · running"))
	h.wait(2 * time.Second)
	h.rec.Inject(channeltest.InjectEdit, &channels.RateLimitError{RetryAfter: 5 * time.Second})
	h.push(tool("c1", "🛠️ a · still running"))
	// While blocked: more states of c1 (latest wins), a new tool, a notice.
	h.wait(time.Second)
	h.push(tool("c1", "🛠️ a · done"), tool("c2", "🛠️ b · running"), projector.Notice{Text: "⚙️ note"})
	h.wait(time.Second)
	if n := len(h.rec.Ops()); n != 1 {
		t.Fatalf("delivered %d ops while rate limited, want only the first post", n)
	}
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 🛠️ a · running", "edit m1 🛠️ a · done", "send m2 🛠️ b · running", "send m3 ⚙️ note", "turn_end"}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestPostRateLimitedIsRetried(t *testing.T) {
	h := newHarness(t, channeltest.Options{}, projector.DefaultSettings(), never)
	h.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 2 * time.Second})
	h.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 0})
	h.push(projector.Status{Text: "one"}, projector.Status{Text: "two"})
	h.drain()
	if got, want := h.ops(), []string{"send m1 one", "send m2 two"}; !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	if !h.now.Equal(time.Unix(2, 100_000_000)) {
		t.Errorf("delivered at %v, want after the 2s + 100ms waits", h.now.Sub(time.Unix(0, 0)))
	}
}

func TestDraftEditsAreThrottledAndRollOver(t *testing.T) {
	lim := channels.Limits{MaxMessageChars: 40, MinEditInterval: time.Second}
	h := newHarness(t, channeltest.Options{Edit: true, Limits: lim}, projector.DefaultSettings(), never)
	h.lane.BeginTurn(h.now)
	words := strings.Fields("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen")
	for _, w := range words {
		h.push(projector.Text{Text: w + " "})
		h.wait(100 * time.Millisecond)
	}
	h.push(projector.Text{Text: "end."}, projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	var final []string
	for _, m := range h.rec.Messages() {
		final = append(final, m.Text)
		if n := len([]rune(m.Text)); n > 40 {
			t.Errorf("message %s has %d chars, limit 40", m.ID, n)
		}
	}
	if got, want := strings.Join(final, ""), strings.Join(words, " ")+" end."; got != want {
		t.Errorf("delivered %q, want %q", got, want)
	}
	if len(final) < 2 {
		t.Errorf("%d messages, want a rollover", len(final))
	}
	// 15 chunks over 1.5 s: throttled to about one edit per second per
	// message, far fewer than one per chunk.
	edits := 0
	for _, op := range h.rec.Ops() {
		if op.Op == "edit" {
			edits++
		}
	}
	if edits > 6 {
		t.Errorf("%d edits for 16 chunks in 1.6 s; the 1 s edit interval was not honoured", edits)
	}
}

func TestBlocksNeverHoldLongerThanMaxHold(t *testing.T) {
	s := projector.DefaultSettings()
	s.LiveText = projector.LiveBlocks
	h := newHarness(t, channeltest.Options{Edit: true}, s, never)
	h.lane.BeginTurn(h.now)
	h.push(projector.Text{Text: "First paragraph.\n\nSecond, "})
	if got, want := h.ops(), []string{"send m1 First paragraph.\n\n"}; !cmp.Equal(got, want) {
		t.Errorf("paragraph not released at once (-got +want):\n%s", cmp.Diff(got, want))
	}
	h.wait(dispatch.MaxHold - time.Millisecond)
	h.push(projector.Text{Text: "still going"})
	if n := len(h.rec.Ops()); n != 1 {
		t.Errorf("fragment released before %v", dispatch.MaxHold)
	}
	h.wait(time.Millisecond)
	if got, want := h.ops(), []string{"send m1 First paragraph.\n\n", "send m2 Second, still going"}; !cmp.Equal(got, want) {
		t.Errorf("fragment held past %v (-got +want):\n%s", dispatch.MaxHold, cmp.Diff(got, want))
	}
}

func TestFinalOnlyHoldsUntilTurnEnd(t *testing.T) {
	s := projector.DefaultSettings()
	s.DeliveryMode = projector.DeliveryFinalOnly
	h := newHarness(t, channeltest.Options{Edit: true}, s, never)
	h.lane.BeginTurn(h.now)
	h.push(projector.Text{Text: "a"}, tool("c1", "running"), projector.Text{Text: "b"})
	h.wait(time.Minute)
	h.push(tool("c1", "done"), projector.Text{Text: "c"})
	h.wait(time.Minute)
	if n := len(h.rec.Ops()); n != 0 {
		t.Fatalf("final_only delivered %d ops before the turn ended", n)
	}
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 a", "send m2 done", "send m3 bc", "turn_end"}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestTypingLifecycle(t *testing.T) {
	lim := channels.Limits{TypingInterval: 8 * time.Second}
	tc := typing.Config{Mode: typing.ModeMessage, TTL: time.Minute}
	h := newHarness(t, channeltest.Options{Edit: true, Typing: true, Limits: lim}, projector.DefaultSettings(), tc)
	h.lane.BeginTurn(h.now)
	h.wait(3 * time.Second) // message mode: nothing visible yet
	h.push(projector.Text{Text: "working"})
	h.wait(20 * time.Second) // two refreshes
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	h.push(projector.Text{Text: "late"}) // sealed: no restart
	h.drain()
	var states []string
	for _, op := range h.rec.Ops() {
		if op.Op == "typing" {
			states = append(states, op.State)
		}
	}
	if want := []string{"start", "refresh", "refresh", "stop"}; !cmp.Equal(states, want) {
		t.Errorf("typing (-got +want):\n%s", cmp.Diff(states, want))
	}
	if h.rec.TypingShown(h.rec.Thread("t")) {
		t.Error("typing still shown after the turn")
	}
}

// TestTypingAfterEachPost: on a channel that hides typing when the bot
// posts, typing is shown again right after each post while the turn runs
// (once after posts delivered together), and never after the turn's end.
func TestTypingAfterEachPost(t *testing.T) {
	for _, cleared := range []bool{true, false} {
		t.Run(fmt.Sprintf("cleared=%v", cleared), func(t *testing.T) {
			lim := channels.Limits{TypingInterval: 8 * time.Second, TypingClearedByPost: cleared}
			s := projector.DefaultSettings()
			s.LiveText = projector.LiveBlocks
			h := newHarness(t, channeltest.Options{Edit: true, Typing: true, Limits: lim}, s, typing.DefaultConfig())
			h.lane.BeginTurn(h.now)
			h.next = h.lane.Step(h.t.Context(), h.now)
			h.push(tool("c1", "🛠️ ls · running"))
			h.wait(2 * time.Second)
			h.push(tool("c1", "🛠️ ls · done")) // an edit: typing stays
			h.wait(2 * time.Second)
			h.push(projector.Status{Text: "⚙️ one"}, projector.Status{Text: "⚙️ two"})
			h.wait(2 * time.Second)
			h.push(projector.Text{Text: "The answer.\n\n"})
			h.wait(time.Second)
			h.push(projector.Text{Text: "The end."}, projector.TurnEnd{StopReason: "end_turn"})
			h.drain()
			h.push(projector.Status{Text: "⚙️ late"}) // after the turn
			h.drain()
			want := []string{
				"typing start",
				"send m1 🛠️ ls · running", "typing refresh",
				"edit m1 🛠️ ls · done",
				"send m2 ⚙️ one", "send m3 ⚙️ two", "typing refresh",
				"send m4 The answer.\n\n", "typing refresh",
				// The turn ends with this post: no refresh before the stop.
				"send m5 The end.",
				"turn_end", "typing stop",
				"send m6 ⚙️ late",
			}
			if !cleared {
				want = slices.DeleteFunc(want, func(op string) bool { return op == "typing refresh" })
			}
			if got := h.ops(); !cmp.Equal(got, want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
			}
		})
	}
}

// TestTypingRefreshRetriedAfterRateLimit: a typing refresh the platform
// refuses for a rate limit is tried again once the limit allows, while the
// turn runs.
func TestTypingRefreshRetriedAfterRateLimit(t *testing.T) {
	lim := channels.Limits{TypingInterval: 8 * time.Second, TypingClearedByPost: true}
	h := newHarness(t, channeltest.Options{Edit: true, Typing: true, Limits: lim}, projector.DefaultSettings(), typing.DefaultConfig())
	h.lane.BeginTurn(h.now)
	h.next = h.lane.Step(h.t.Context(), h.now)
	h.rec.Inject(channeltest.InjectTyping, &channels.RateLimitError{RetryAfter: 1500 * time.Millisecond})
	h.push(tool("c1", "🛠️ ls · running"))
	typingOps := func() []string {
		var out []string
		for _, a := range h.rec.Attempts() {
			if a.Op == "typing" {
				out = append(out, a.State+a.Error)
			}
		}
		return out
	}
	refused := typingOps()
	if len(refused) != 2 || refused[1] == "refresh" {
		t.Fatalf("typing attempts = %q, want the start and a refused refresh", refused)
	}
	h.wait(time.Second)
	if n := len(typingOps()); n != 2 {
		t.Errorf("typing tried again before the rate limit allowed: %q", typingOps())
	}
	h.wait(time.Second)
	if got := typingOps(); len(got) != 3 || got[2] != "refresh" {
		t.Errorf("typing attempts = %q, want a refresh once the rate limit allowed", got)
	}
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	if h.rec.TypingShown(h.rec.Thread("t")) {
		t.Error("typing still shown after the turn")
	}
}

// blocker is an adapter whose Post blocks until released: a stalled thread.
type blocker struct {
	channels.Adapter
	release chan struct{}
}

func (b blocker) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	select {
	case <-b.release:
	case <-ctx.Done():
		return channels.Handle{}, ctx.Err()
	}
	return b.Adapter.Post(ctx, t, m)
}

// TestStalledLaneDoesNotDelayOthers: one thread's adapter hangs; another
// thread's lane keeps delivering. Real runners, fake time (synctest).
func TestStalledLaneDoesNotDelayOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		slowRec := channeltest.New(channeltest.Options{})
		fastRec := channeltest.New(channeltest.Options{Edit: true})
		b := blocker{Adapter: slowRec.Adapter(), release: make(chan struct{})}
		slow := dispatch.Start(ctx, dispatch.NewLane(dispatch.Options{Adapter: b, Thread: slowRec.Thread("slow"), Stream: projector.DefaultSettings(), Typing: never}))
		fast := dispatch.Start(ctx, dispatch.NewLane(dispatch.Options{Adapter: fastRec.Adapter(), Thread: fastRec.Thread("fast"), Stream: projector.DefaultSettings(), Typing: never}))
		slow.Push(projector.Status{Text: "stuck"})
		for i := range 5 {
			fast.Push(projector.Status{Text: fmt.Sprint("fast ", i)})
			time.Sleep(time.Second) // fake time inside the bubble
		}
		synctest.Wait()
		if n := len(fastRec.Ops()); n != 5 {
			t.Errorf("fast thread delivered %d of 5 while the other was stalled", n)
		}
		if n := len(slowRec.Ops()); n != 0 {
			t.Errorf("stalled thread delivered %d", n)
		}
		close(b.release)
		synctest.Wait()
		if n := len(slowRec.Ops()); n != 1 {
			t.Errorf("stalled thread delivered %d after release, want 1", n)
		}
		slow.Close()
		fast.Close()
	})
}

// TestRunnerTimersAndShutdown drives a Runner with real timers on fake time:
// a draft edit waits for the edit interval; Close stops the goroutine.
func TestRunnerTimersAndShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := channeltest.New(channeltest.Options{Edit: true, Typing: true, Limits: channels.Limits{MinEditInterval: time.Second, TypingInterval: 8 * time.Second}})
		r := dispatch.Start(t.Context(), dispatch.NewLane(dispatch.Options{Adapter: rec.Adapter(), Thread: rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: typing.DefaultConfig()}))
		r.BeginTurn()
		r.Push(projector.Text{Text: "Hello"})
		synctest.Wait()
		r.Push(projector.Text{Text: ", world"})
		synctest.Wait()
		if got := rec.Messages(); len(got) != 1 || got[0].Text != "Hello" {
			t.Fatalf("before the edit interval: %+v", got)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := rec.Messages(); got[0].Text != "Hello, world" {
			t.Errorf("after the edit interval: %q", got[0].Text)
		}
		time.Sleep(9 * time.Second)
		synctest.Wait()
		var states []string
		for _, op := range rec.Ops() {
			if op.Op == "typing" {
				states = append(states, op.State)
			}
		}
		if want := []string{"start", "refresh"}; !cmp.Equal(states, want) {
			t.Errorf("typing (-got +want):\n%s", cmp.Diff(states, want))
		}
		r.Close()
		select {
		case <-r.Done():
		default:
			t.Error("runner goroutine still running after Close")
		}
	})
}

// TestRunnerPushNeverBlocks: 10,000 outputs pushed while the adapter is
// stalled return at once and are all delivered, in order, afterwards.
func TestRunnerPushNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := channeltest.New(channeltest.Options{})
		b := blocker{Adapter: rec.Adapter(), release: make(chan struct{})}
		r := dispatch.Start(t.Context(), dispatch.NewLane(dispatch.Options{Adapter: b, Thread: rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never}))
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range 10000 {
				r.Push(projector.Status{Text: fmt.Sprint(i)})
			}
		})
		wg.Wait()
		close(b.release)
		synctest.Wait()
		ops := rec.Ops()
		if len(ops) != 10000 {
			t.Fatalf("delivered %d, want 10000", len(ops))
		}
		for i, op := range ops {
			if op.Text != fmt.Sprint(i) {
				t.Fatalf("op %d is %q: order broken", i, op.Text)
			}
		}
		r.Close()
	})
}

// TestFailingPostDoesNotStallThread: a post the platform refuses for good
// is given up at once, the thread is told, and later output still
// arrives.
func TestFailingPostDoesNotStallThread(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true}, projector.DefaultSettings(), never)
	h.lane.BeginTurn(h.now)
	h.rec.Inject(channeltest.InjectPost, channels.Permanent(errors.New("400 bad request")))
	h.push(projector.Text{Text: "rejected text"}, projector.Notice{Text: "⚙️ after"}, projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{
		"send m1 ⚙️ 1 message (13 characters) could not be delivered: the chat platform refused it.",
		"send m2 ⚙️ after",
		"turn_end",
	}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	if n := len(h.rec.Attempts()); n != 4 {
		t.Errorf("%d attempts, want 1 refused post + 2 posts + the note", n)
	}
	if h.now != time.Unix(0, 0) {
		t.Errorf("the refused post held the thread for %v", h.now.Sub(time.Unix(0, 0)))
	}
}

// An adapter whose capabilities change while it runs (a cluster edge that
// announced another set) is asked again as the next turn begins: the
// second turn edits its tool line where the first could only post anew.
func TestCapsReadAgainAsATurnBegins(t *testing.T) {
	h := newHarness(t, channeltest.Options{}, projector.DefaultSettings(), never)
	turn := func(id string) {
		h.lane.BeginTurn(h.now)
		h.push(tool(id, id+" running"))
		h.wait(2 * time.Second)
		h.push(tool(id, id+" done"), projector.TurnEnd{StopReason: "end_turn"})
		h.drain()
	}
	turn("c1")
	h.rec.SetCaps(channels.Caps{Edit: true})
	turn("c2")
	want := []string{"send m1 c1 running", "send m2 c1 done", "turn_end", "send m3 c2 running", "edit m3 c2 done", "turn_end"}
	if got := h.ops(); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	// Taken away again: the third turn posts anew, and tries no edit.
	h.rec.SetCaps(channels.Caps{})
	turn("c3")
	if got, want := h.ops()[len(want):], []string{"send m4 c3 running", "send m5 c3 done", "turn_end"}; !cmp.Equal(got, want) {
		t.Errorf("after the edits were taken away (-got +want):\n%s", cmp.Diff(got, want))
	}
	for _, a := range h.rec.Attempts() {
		if a.Error != "" {
			t.Errorf("a failed call: %+v", a)
		}
	}
}
