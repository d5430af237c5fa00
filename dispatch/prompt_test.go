package dispatch_test

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

var choice = channels.Choice{
	Text:    "🔐 Edit main.go?",
	Options: []channels.Option{{ID: "p1:allow", Label: "Allow"}, {ID: "p1:reject", Label: "Reject"}},
}

func TestPromptComesAfterEarlierTextAndIsResolvedInPlace(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true, Prompt: true}, projector.DefaultSettings(), never)
	var got []channels.Handle
	h.lane.BeginTurn(h.now)
	h.lane.Push(h.now, projector.Text{Text: "Let me edit it."})
	h.lane.Prompt(h.now, "p1", choice, func(hd channels.Handle, err error) {
		if err != nil {
			t.Errorf("posted: %v", err)
		}
		got = append(got, hd)
	})
	h.wait(time.Second)
	if len(got) != 1 || !got[0].Known() {
		t.Fatalf("posted callback got %v, want one known handle", got)
	}
	h.lane.Resolve(h.now, "p1", "🔐 Edit main.go? — Allow (by ann)")
	h.wait(time.Second) // the edit waits out the edit interval
	h.push(projector.Text{Text: "Done."}, projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{
		"send m1 Let me edit it.",
		"prompt m2 🔐 Edit main.go?",
		"edit m2 🔐 Edit main.go? — Allow (by ann)",
		"send m3 Done.",
		"turn_end",
	}
	if diff := cmp.Diff(want, h.ops()); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
	if m, _ := h.rec.Message("m2"); m.Options != nil {
		t.Errorf("resolved prompt still has buttons %v", m.Options)
	}
}

func TestPromptWithoutPrompterIsNumbered(t *testing.T) {
	h := newHarness(t, channeltest.Options{}, projector.DefaultSettings(), never)
	h.lane.BeginTurn(h.now)
	h.lane.Prompt(h.now, "p1", choice, nil)
	h.wait(time.Second)
	h.lane.Resolve(h.now, "p1", "expired")
	h.push(projector.TurnEnd{})
	h.drain()
	want := []string{
		"send m1 🔐 Edit main.go?\n\nReply with the number of your choice:\n1. Allow\n2. Reject",
		"send m2 expired",
		"turn_end",
	}
	if diff := cmp.Diff(want, h.ops()); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
}

func TestPromptShowsAtOnceInFinalOnly(t *testing.T) {
	s := projector.DefaultSettings()
	s.DeliveryMode = projector.DeliveryFinalOnly
	h := newHarness(t, channeltest.Options{Edit: true, Prompt: true}, s, never)
	h.lane.BeginTurn(h.now)
	h.lane.Push(h.now, projector.Text{Text: "held"})
	h.lane.Prompt(h.now, "p1", choice, nil)
	h.wait(time.Second)
	if diff := cmp.Diff([]string{"prompt m1 🔐 Edit main.go?"}, h.ops()); diff != "" {
		t.Fatalf("before the turn ended (-want +got):\n%s", diff)
	}
	h.lane.Resolve(h.now, "p1", "answered")
	h.wait(time.Second)
	h.push(projector.TurnEnd{})
	h.drain()
	want := []string{"prompt m1 🔐 Edit main.go?", "edit m1 answered", "send m2 held", "turn_end"}
	if diff := cmp.Diff(want, h.ops()); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
}

func TestPromptResolvedBeforeShownPostsTheOutcome(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true, Prompt: true}, projector.DefaultSettings(), never)
	h.rec.Inject(channeltest.InjectPrompt, &channels.RateLimitError{RetryAfter: time.Minute})
	h.lane.BeginTurn(h.now)
	h.lane.Prompt(h.now, "p1", choice, nil)
	h.wait(time.Second)
	h.lane.Resolve(h.now, "p1", "cancelled")
	h.push(projector.TurnEnd{})
	h.drain()
	want := []string{"send m1 cancelled", "turn_end"}
	if diff := cmp.Diff(want, h.ops()); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
}

func TestPromptResolvedAfterTurnEndStillEdits(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true, Prompt: true}, projector.DefaultSettings(), never)
	h.lane.BeginTurn(h.now)
	h.lane.Prompt(h.now, "p1", choice, nil)
	h.push(projector.TurnEnd{StopReason: "cancelled"})
	h.drain()
	h.lane.Resolve(h.now, "p1", "cancelled by ann")
	h.drain()
	h.wait(2 * time.Second)
	want := []string{"prompt m1 🔐 Edit main.go?", "turn_end", "edit m1 cancelled by ann"}
	if diff := cmp.Diff(want, h.ops()); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
}

type countingObserver struct {
	delivered map[string]int
	latency   map[string]time.Duration
	limited   int
}

func (o *countingObserver) Delivered(op string, kind channels.Kind, d time.Duration) {
	o.delivered[op+" "+string(kind)]++
	o.latency[op+" "+string(kind)] = max(o.latency[op+" "+string(kind)], d)
}
func (o *countingObserver) RateLimited(string) { o.limited++ }

func TestObserverSeesDeliveriesAndRateLimits(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Edit: true, Prompt: true})
	obs := &countingObserver{delivered: map[string]int{}, latency: map[string]time.Duration{}}
	lane := dispatch.NewLane(dispatch.Options{Adapter: rec.Adapter(), Thread: rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never, Observer: obs})
	now := time.Unix(0, 0)
	step := func(d time.Duration) {
		now = now.Add(d)
		lane.Step(t.Context(), now)
	}
	rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: time.Second, Scope: "post"})
	lane.BeginTurn(now)
	lane.Push(now, projector.Text{Text: "hello"}, tool("c1", "🛠️ ls · running"))
	step(0)           // rate limited
	step(time.Second) // posts the text, then the tool line
	lane.Push(now, tool("c1", "🛠️ ls · done"), projector.TurnEnd{})
	step(2 * time.Second) // edits the tool line
	want := map[string]int{"post text": 1, "post tool": 1, "edit tool": 1}
	if diff := cmp.Diff(want, obs.delivered); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if obs.limited != 1 {
		t.Errorf("rate limits seen = %d, want 1", obs.limited)
	}
	if got := obs.latency["post text"]; got != time.Second {
		t.Errorf("text latency = %v, want 1s (it waited out the rate limit)", got)
	}
	if got := obs.latency["edit tool"]; got != 2*time.Second {
		t.Errorf("tool edit latency = %v, want 2s", got)
	}
}
