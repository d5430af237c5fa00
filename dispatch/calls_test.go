package dispatch_test

import (
	"errors"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

var form = channels.Form{Text: "Which branch?", Fields: []channels.Field{{ID: "branch", Label: "Branch", Required: true}}}

// A form comes after the text before it, and its outcome replaces it as
// a notice.
func TestFormComesInOrderAndIsFoldedInPlace(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true, Form: true}, projector.DefaultSettings(), never)
	var got []channels.Handle
	h.lane.BeginTurn(h.now)
	h.lane.Push(h.now, projector.Text{Text: "I need to know."})
	h.lane.Form(h.now, "q1", form, func(hd channels.Handle, err error) {
		if err != nil {
			t.Errorf("posted: %v", err)
		}
		got = append(got, hd)
	})
	h.wait(time.Second)
	if len(got) != 1 || !got[0].Known() {
		t.Fatalf("posted callback got %v, want one known handle", got)
	}
	h.lane.Resolve(h.now, "q1", "❓ Which branch? — main (by ann)")
	h.wait(time.Second)
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := []string{
		"send m1 I need to know.",
		"form m2 Which branch?",
		"edit m2 ❓ Which branch? — main (by ann)",
		"turn_end",
	}
	if diff := cmp.Diff(want, h.ops()); diff != "" {
		t.Errorf("ops (-want +got):\n%s", diff)
	}
	if m, _ := h.rec.Message("m2"); m.Kind != channels.KindNotice {
		t.Errorf("the folded form is a %q, want a notice", m.Kind)
	}
}

// A form settled before it could be posted is never posted: its outcome
// is, as a notice, and nobody is told of a post.
func TestFormSettledBeforeItsPost(t *testing.T) {
	s := projector.DefaultSettings()
	h := newHarness(t, channeltest.Options{Edit: true, Form: true}, s, never)
	h.rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 5 * time.Second})
	h.lane.BeginTurn(h.now)
	h.lane.Push(h.now, projector.Text{Text: "Asking."})
	h.lane.Form(h.now, "q1", form, func(channels.Handle, error) { t.Error("posted called for a form settled before it was shown") })
	h.lane.Resolve(h.now, "q1", "❓ Which branch? — timed out")
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	ops := h.ops()
	for _, op := range ops {
		if len(op) >= 4 && op[:4] == "form" {
			t.Errorf("the settled form was posted: %q", ops)
		}
	}
	msgs := h.rec.Messages()
	if len(msgs) != 2 || msgs[1].Text != "❓ Which branch? — timed out" || msgs[1].Kind != channels.KindNotice {
		t.Errorf("messages %+v, want the text then the outcome as a notice", msgs)
	}
}

// A form the platform refuses for good is reported unshown; its later
// Resolve posts nothing the machine did not ask for.
func TestFormRefusedIsReported(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true, Form: true}, projector.DefaultSettings(), never)
	refused := channels.Permanent(errors.New("invalid form"))
	h.rec.Inject(channeltest.InjectForm, refused)
	var gotErr error
	h.lane.Form(h.now, "q1", form, func(_ channels.Handle, err error) { gotErr = err })
	h.wait(time.Second)
	if !errors.Is(gotErr, refused) {
		t.Fatalf("posted got %v, want the refusal", gotErr)
	}
}

// An adapter that no longer takes forms (its capabilities changed after
// the form was asked for) has the form reported unshown, not posted some
// other way.
func TestFormWithoutFormer(t *testing.T) {
	h := newHarness(t, channeltest.Options{Edit: true}, projector.DefaultSettings(), never)
	var gotErr error
	h.lane.Form(h.now, "q1", form, func(_ channels.Handle, err error) { gotErr = err })
	h.wait(time.Second)
	if gotErr == nil || !channels.IsPermanent(gotErr) {
		t.Fatalf("posted got %v, want a permanent error", gotErr)
	}
	if ops := h.ops(); len(ops) != 0 {
		t.Errorf("ops %q, want none", ops)
	}
}
