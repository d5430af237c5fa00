package channeltest

import (
	"context"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// TestRecorderForm: a form is recorded with its field ids; AnswerForm
// delivers an answer, and refuses one the platform could not give (a
// field or option the form has not, a form folded by an edit); an
// injected error fails the call.
func TestRecorderForm(t *testing.T) {
	r := New(Options{Edit: true, Form: true})
	th := r.Thread("f")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan channels.Inbound, 1)
	go func() { _ = r.Adapter().Run(ctx, func(_ context.Context, in channels.Inbound) { got <- in }) }()
	fm := r.Adapter().(channels.Former)
	h, err := fm.Form(ctx, th, channels.Form{Text: "Which?", Fields: []channels.Field{{ID: "c", Label: "C", Kind: channels.FieldChoice, Options: []channels.Option{{ID: "a", Label: "A"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if ops := r.OpsIn(th); len(ops) != 1 || ops[0].Op != "form" || ops[0].Text != "Which?" || len(ops[0].Options) != 1 || ops[0].Options[0] != "c" {
		t.Errorf("ops = %+v, want one form with field c", ops)
	}
	ann := channels.Author{ID: "u", Name: "Ann"}
	if err := r.AnswerForm(ctx, ann, h, channels.FormAccept, map[string][]string{"x": {"a"}}); err == nil {
		t.Error("an answer to a field the form has not was delivered")
	}
	if err := r.AnswerForm(ctx, ann, h, channels.FormAccept, map[string][]string{"c": {"b"}}); err == nil {
		t.Error("an answer with an option the field has not was delivered")
	}
	if err := r.AnswerForm(ctx, ann, h, channels.FormAccept, map[string][]string{"c": {"a"}}); err != nil {
		t.Fatal(err)
	}
	if in := <-got; in.Intent() != channels.IntentForm || in.Form.Form != h || in.Form.Values["c"][0] != "a" || in.Reply == nil {
		t.Errorf("inbound = %+v, want the form's answer with a reply", in)
	}
	if err := r.Adapter().(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindNotice, Text: "folded"}); err != nil {
		t.Fatal(err)
	}
	if err := r.AnswerForm(ctx, ann, h, channels.FormDecline, nil); err == nil {
		t.Error("an answer to a folded form was delivered")
	}
	if _, err := fm.Form(ctx, th, channels.Form{Text: "no fields"}); err == nil || !channels.IsPermanent(err) {
		t.Errorf("a form without fields or url: %v, want a permanent error", err)
	}
	r.Inject(InjectForm, channels.ErrMessageGone)
	if _, err := fm.Form(ctx, th, channels.Form{Text: "x", URL: "https://example.com"}); err != channels.ErrMessageGone {
		t.Errorf("injected: %v", err)
	}
}
