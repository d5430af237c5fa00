package dispatch_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// reactOps lists the react and unreact calls made, as "react m 👀".
func reactOps(ops []channeltest.Op) []string {
	var out []string
	for _, op := range ops {
		if op.Op == "react" || op.Op == "unreact" {
			out = append(out, op.Op+" "+string(op.Msg)+" "+op.Text)
		}
	}
	return out
}

// TestReactionsReplaceAndCollapse: a new emoji replaces the one shown;
// emoji wanted one after the other before any call collapse to the
// last; each message keeps at most one.
func TestReactionsReplaceAndCollapse(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Edit: true, Typing: true, Prompt: true, React: true})
	th := rec.Thread("t")
	s := dispatch.NewReactions(rec.Adapter().(channels.Reactor), th, nil)
	now := time.Unix(0, 0)
	h1, h2 := channels.Handle{Thread: th, ID: "p1"}, channels.Handle{Thread: th, ID: "p2"}
	s.Set(h1, "👀")
	s.Step(t.Context(), now)
	s.Set(h1, "⚠️")
	s.Set(h1, "👀")
	s.Set(h1, "✅") // ⚠️ and 👀 were never shown: one replacement
	s.Set(h2, "⏳")
	if next := s.Step(t.Context(), now); !next.IsZero() {
		t.Fatalf("next = %v, want nothing left", next)
	}
	want := []string{"react p1 👀", "unreact p1 👀", "react p1 ✅", "react p2 ⏳"}
	if got := reactOps(rec.Ops()); !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	if got := rec.Reactions("p1"); !slices.Equal(got, []string{"✅"}) {
		t.Errorf("p1 shows %q", got)
	}
	if !s.Idle() || s.Shown("p1") != "✅" {
		t.Errorf("idle %v, shown %q", s.Idle(), s.Shown("p1"))
	}
}

// TestReactionsRateLimitAndFailures: a rate limit waits as long as the
// platform asks; failures back off and are given up after a few, and a
// reaction refused for good is given up at once.
func TestReactionsRateLimitAndFailures(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Edit: true, Typing: true, Prompt: true, React: true})
	th := rec.Thread("t")
	s := dispatch.NewReactions(rec.Adapter().(channels.Reactor), th, nil)
	now := time.Unix(0, 0)
	rec.Inject(channeltest.InjectReact, &channels.RateLimitError{RetryAfter: 3 * time.Second})
	s.Set(channels.Handle{Thread: th, ID: "p1"}, "👀")
	if next := s.Step(t.Context(), now); !next.Equal(now.Add(3 * time.Second)) {
		t.Fatalf("rate limited: next = %v, want in 3s", next.Sub(now))
	}
	if next := s.Step(t.Context(), now.Add(2*time.Second)); !next.Equal(now.Add(3 * time.Second)) {
		t.Fatalf("called before the limit's end (next %v)", next.Sub(now))
	}
	if len(rec.Reactions("p1")) != 0 {
		t.Fatal("reacted within the rate limit")
	}
	now = now.Add(3 * time.Second)
	s.Step(t.Context(), now)
	if got := rec.Reactions("p1"); !slices.Equal(got, []string{"👀"}) {
		t.Fatalf("after the limit: %q", got)
	}

	for range 5 {
		rec.Inject(channeltest.InjectReact, errors.New("connection refused"))
	}
	s.Set(channels.Handle{Thread: th, ID: "p2"}, "✅")
	var waits []time.Duration
	for next := s.Step(t.Context(), now); !next.IsZero(); next = s.Step(t.Context(), now) {
		waits = append(waits, next.Sub(now))
		now = next
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !slices.Equal(waits, want) {
		t.Errorf("backoff %v, want %v", waits, want)
	}
	if got := rec.Reactions("p2"); len(got) != 0 || !s.Idle() {
		t.Errorf("after 5 failures: %q shown, idle %v; want given up", got, s.Idle())
	}

	rec.Inject(channeltest.InjectReact, channels.Permanent(errors.New("unknown emoji")))
	s.Set(channels.Handle{Thread: th, ID: "p3"}, "🤷")
	if next := s.Step(t.Context(), now); !next.IsZero() || !s.Idle() {
		t.Errorf("refused for good: next %v, idle %v; want given up at once", next, s.Idle())
	}
}

// turnEnder records TurnEnded calls in the recorder's log.
type turnEnder struct {
	channels.Adapter
	channels.Editor
	rec *channeltest.Recorder
}

func (e turnEnder) TurnEnded(_ context.Context, t channels.ThreadRef) {
	e.rec.NoteIn(t, channeltest.Op{Op: "turn_ended"})
}

// TestAtTurnEndAndTurnEnder: what waits for the turn's end runs once
// its last output is delivered, as the adapter is told (TurnEnder);
// OnPosted hears of each message posted.
func TestAtTurnEndAndTurnEnder(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Edit: true})
	th := rec.Thread("t")
	a := rec.Adapter()
	var posted []channels.MessageID
	lane := dispatch.NewLane(dispatch.Options{
		Adapter: turnEnder{a, a.(channels.Editor), rec}, Thread: th, Stream: projector.DefaultSettings(), Typing: typing.DefaultConfig(),
		OnPosted: func(h channels.Handle) { posted = append(posted, h.ID) },
	})
	now := time.Unix(0, 0)
	proj := projector.New(projector.DefaultSettings())
	lane.BeginTurn(now)
	lane.Push(now, proj.BeginTurn(nil)...)
	lane.Push(now, proj.Apply(&projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", Text: "hello"}, nil)...)
	lane.Push(now, proj.EndTurn("end_turn", "", nil)...)
	ran := false
	lane.AtTurnEnd(func() {
		rec.NoteIn(th, channeltest.Op{Op: "at_end"})
		ran = true
	})
	if ran {
		t.Fatal("ran before the turn's end was delivered")
	}
	for next := lane.Step(t.Context(), now); !next.IsZero(); next = lane.Step(t.Context(), now) {
		now = next
	}
	var got []string
	for _, op := range rec.OpsIn(th) {
		got = append(got, op.Op)
	}
	if want := []string{"send", "at_end", "turn_ended"}; !slices.Equal(got, want) {
		t.Errorf("ops %q, want %q", got, want)
	}
	if len(posted) != 1 || posted[0] != rec.OpsIn(th)[0].Msg {
		t.Errorf("OnPosted heard %q", posted)
	}
	// No turn's end queued: at once.
	ran = false
	lane.AtTurnEnd(func() { ran = true })
	if !ran {
		t.Error("AtTurnEnd with no turn's end queued did not run at once")
	}
}
