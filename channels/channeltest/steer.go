package channeltest

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// testForm: a Former's form reaches the thread with its question, an
// answer comes back through Run's handler as Inbound.Form with the form's
// handle, the action and the values, and the gateway's edit folds the
// form to its line.
func testForm(t *testing.T, h Harness) {
	fm, ok := h.Adapter.(channels.Former)
	if !ok {
		t.Skip("not a Former")
	}
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	const question = "Which environment?"
	hd, err := fm.Form(ctx, h.Thread, channels.Form{Title: "Deploy", Text: question, Fields: []channels.Field{
		{ID: "env", Label: "Environment", Kind: channels.FieldChoice, Required: true, Options: []channels.Option{{ID: "stg", Label: "Staging"}, {ID: "prod", Label: "Production"}}},
		{ID: "note", Label: "Note", Kind: channels.FieldText},
	}})
	if err != nil {
		t.Fatalf("Form: %v", err)
	}
	checkHandle(t, "Form", h, hd)
	if seen, err := h.Seen(ctx, hd.ID); err != nil || !strings.Contains(seen, question) {
		t.Errorf("Seen after Form = %q, %v; want it to contain %q", seen, err, question)
	}
	if h.AnswerForm == nil {
		return // the harness cannot answer forms
	}
	author := h.author(channels.Author{ID: "u-answerer", Name: "Answerer"})
	values := map[string][]string{"env": {"prod"}, "note": {"after lunch"}}
	if err := h.AnswerForm(ctx, author, hd, channels.FormAccept, values); err != nil {
		t.Fatalf("AnswerForm: %v", err)
	}
	in := run.next(ctx, t)
	if in.Intent() != channels.IntentForm {
		t.Fatalf("inbound after AnswerForm = %+v (%v), want a form's answer", in, in.Intent())
	}
	if f := in.Form; f.Form.ID != hd.ID || f.Action != channels.FormAccept || !slices.Equal(f.Values["env"], values["env"]) || !slices.Equal(f.Values["note"], values["note"]) {
		t.Errorf("inbound Form = %+v, want form %q accepted with %v", *f, hd.ID, values)
	}
	if in.Thread != h.Thread || in.Author.ID != author.ID {
		t.Errorf("inbound after AnswerForm from %q in %v, want %q in %v", in.Author.ID, in.Thread, author.ID, h.Thread)
	}
	if ed, ok := h.Adapter.(channels.Editor); ok {
		const folded = "✅ Answered: Production"
		if err := ed.Edit(ctx, hd, channels.Message{Kind: channels.KindNotice, Text: folded}); err != nil {
			t.Fatalf("Edit of the form: %v", err)
		}
		if seen, err := h.Seen(ctx, hd.ID); err != nil || !strings.Contains(seen, folded) || strings.Contains(seen, question) {
			t.Errorf("Seen after folding the form = %q, %v; want %q only", seen, err, folded)
		}
	}
}

// testReact: a Reactor's reaction shows on a message, once however often
// it is added, and goes away with Unreact.
func testReact(t *testing.T, h Harness) {
	r, ok := h.Adapter.(channels.Reactor)
	if !ok {
		t.Skip("not a Reactor")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	hd, _ := postSeen(ctx, t, h, channels.Message{Kind: channels.KindText, Text: "react to me"})
	for _, e := range []string{"👀", "👀", "✅"} {
		if err := r.React(ctx, hd, e); err != nil {
			t.Fatalf("React(%s): %v", e, err)
		}
	}
	if h.SeenReactions != nil {
		if got, err := h.SeenReactions(ctx, hd); err != nil || !slices.Equal(got, []string{"👀", "✅"}) {
			t.Errorf("reactions = %q, %v; want [👀 ✅]", got, err)
		}
	}
	if err := r.Unreact(ctx, hd, "👀"); err != nil {
		t.Fatalf("Unreact: %v", err)
	}
	if h.SeenReactions != nil {
		if got, err := h.SeenReactions(ctx, hd); err != nil || !slices.Equal(got, []string{"✅"}) {
			t.Errorf("reactions after Unreact = %q, %v; want [✅]", got, err)
		}
	}
}
