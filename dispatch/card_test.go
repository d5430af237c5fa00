package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
)

// carder is a recording adapter that shows tool calls as cards: a card is
// recorded as a message whose text is its rows joined by " / ".
type carder struct {
	channels.Adapter
	channels.Editor
	channels.Prompter
	on bool
}

func (c carder) Cards() bool { return c.on }

func (c carder) Card(ctx context.Context, t channels.ThreadRef, h channels.Handle, rows []channels.Message) (channels.Handle, error) {
	var texts []string
	for _, r := range rows {
		texts = append(texts, r.Key+"="+r.Text)
	}
	m := channels.Message{Kind: channels.KindTool, Text: "[" + strings.Join(texts, " / ") + "]"}
	if h == (channels.Handle{}) {
		return c.Adapter.Post(ctx, t, m)
	}
	return h, c.Editor.Edit(ctx, h, m)
}

func newCardHarness(t *testing.T, on bool) *harness {
	rec := channeltest.New(channeltest.Options{Edit: true, Prompt: true})
	a := rec.Adapter()
	h := &harness{t: t, rec: rec, now: time.Unix(0, 0)}
	h.lane = dispatch.NewLane(dispatch.Options{
		Adapter: carder{Adapter: a, Editor: a.(channels.Editor), Prompter: a.(channels.Prompter), on: on},
		Thread:  rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never,
		OnTurnEnd: func(e projector.TurnEnd) { rec.Note(channeltest.Op{Op: "turn_end", StopReason: e.StopReason}) },
	})
	return h
}

// A card takes the tool calls until a text follows it; the next tool call
// starts a new card. A tool of an earlier card still edits its row there,
// and that card stays closed. A permission prompt leaves the card open.
func TestCardGroupsToolCallsBetweenTexts(t *testing.T) {
	h := newCardHarness(t, true)
	h.lane.BeginTurn(h.now)
	h.push(projector.Text{Text: "Looking."}, tool("c1", "a…"), tool("c2", "b…"))
	h.lane.Prompt(h.now, "p", channels.Choice{Text: "Allow b?", Options: []channels.Option{{ID: "y", Label: "Yes"}}}, nil)
	h.push(tool("c3", "c…"))
	h.wait(2 * time.Second)
	h.push(projector.Text{Text: " Then."}, tool("c4", "d…"))
	h.wait(2 * time.Second)
	h.push(tool("c1", "a ✓"), tool("c5", "e…"))
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{
		"send m1 Looking.",
		"send m2 [c1=a… / c2=b…]",
		"prompt m3 Allow b?",
		"edit m2 [c1=a… / c2=b… / c3=c…]",
		"send m4  Then.",
		"send m5 [c4=d…]",
		"edit m2 [c1=a ✓ / c2=b… / c3=c…]",
		"edit m5 [c4=d… / c5=e…]",
		"turn_end",
	}
	if got := h.ops(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Updates of a posted card are merged: at most one edit per
// MinEditInterval (1 s), the last state shown.
func TestCardEditsArePaced(t *testing.T) {
	h := newCardHarness(t, true)
	h.lane.BeginTurn(h.now)
	h.push(tool("c1", "0"))
	for i := 1; i <= 20; i++ {
		h.wait(100 * time.Millisecond)
		h.push(tool("c1", strings.Repeat("+", i)))
	}
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	edits := 0
	for _, op := range h.rec.Ops() {
		if op.Op == "edit" {
			edits++
		}
	}
	// 2 s of updates after the post: two paced edits, then the last.
	if edits > 3 {
		t.Errorf("%d edits of the card in 2 s of updates, want at most 3: %q", edits, h.ops())
	}
	if got := h.ops(); got[len(got)-2] != "edit m1 [c1="+strings.Repeat("+", 20)+"]" {
		t.Errorf("the last edit is %q, want the last state", got[len(got)-2])
	}
}

// The next turn's tool calls, pushed before this turn's end is delivered,
// make a card of their own, and only one.
func TestCardOfTheNextTurn(t *testing.T) {
	h := newCardHarness(t, true)
	h.lane.BeginTurn(h.now)
	h.lane.Push(h.now, tool("c1", "a"), projector.TurnEnd{StopReason: "end_turn"}, tool("c2", "b"))
	h.next = h.lane.Step(h.t.Context(), h.now)
	h.push(tool("c3", "c"))
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 [c1=a]", "turn_end", "send m2 [c2=b]", "edit m2 [c2=b / c3=c]", "turn_end"}
	if got := h.ops(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An adapter whose cards are off gets tool lines.
func TestCardsOff(t *testing.T) {
	h := newCardHarness(t, false)
	h.lane.BeginTurn(h.now)
	h.push(tool("c1", "a"), tool("c2", "b"), projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 a", "send m2 b", "turn_end"}
	if got := h.ops(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A card that can no longer be edited is posted anew with all its rows.
func TestCardGoneIsPostedAnew(t *testing.T) {
	h := newCardHarness(t, true)
	h.lane.BeginTurn(h.now)
	h.push(tool("c1", "a"))
	h.wait(2 * time.Second)
	h.rec.Inject(channeltest.InjectEdit, channels.ErrMessageGone)
	h.push(tool("c2", "b"), projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{"send m1 [c1=a]", "send m2 [c1=a / c2=b]", "turn_end"}
	if got := h.ops(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
