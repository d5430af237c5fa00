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
	fm, ok := channels.As[channels.Former](h.Adapter)
	if !ok {
		t.Skip("not a Former")
	}
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	const question = "Which environment?"
	hd, err := fm.Form(ctx, h.Thread, channels.Form{Title: "Deploy", Text: question, Fields: []channels.Field{
		{ID: "env", Label: "Environment", Kind: channels.FieldChoice, Options: []channels.Option{{ID: "stg", Label: "Staging"}, {ID: "prod", Label: "Production"}}},
		{ID: "note", Label: "Note", Kind: channels.FieldText, Required: true},
	}})
	if err != nil {
		t.Fatalf("Form: %v", err)
	}
	checkHandle(t, "Form", h, hd)
	if seen, err := h.Seen(ctx, hd.ID); err != nil || !strings.Contains(seen, question) {
		t.Errorf("Seen after Form = %q, %v; want it to contain %q", seen, err, question)
	}
	author := h.author(channels.Author{ID: "u-answerer", Name: "Answerer"})
	want := map[string][]string{"note": {"after lunch"}}
	switch {
	case h.AnswerForm != nil:
		want["env"] = []string{"prod"}
		err = h.AnswerForm(ctx, author, hd, channels.FormAccept, want)
	case h.Answer != nil:
		err = h.Answer(ctx, author, hd, map[string]string{"Note": "after lunch"})
	default:
		return // the fake cannot answer forms yet
	}
	if err != nil {
		t.Fatalf("answering the form: %v", err)
	}
	in := run.next(ctx, t)
	if in.Intent() != channels.IntentForm {
		t.Fatalf("inbound after the answer = %+v (%v), want a form's answer", in, in.Intent())
	}
	if f := in.Form; f.Form.ID != hd.ID || f.Action != channels.FormAccept || !slices.Equal(f.Values["note"], want["note"]) || !slices.Equal(f.Values["env"], want["env"]) {
		t.Errorf("inbound Form = %+v, want form %q accepted with %v", *f, hd.ID, want)
	}
	if in.Thread != h.Thread || in.Author.ID != author.ID {
		t.Errorf("inbound after the answer from %q in %v, want %q in %v", in.Author.ID, in.Thread, author.ID, h.Thread)
	}
	if ed, ok := channels.As[channels.Editor](h.Adapter); ok {
		const folded = "✅ Answered: after lunch"
		if err := ed.Edit(ctx, hd, channels.Message{Kind: channels.KindNotice, Text: folded}); err != nil {
			t.Fatalf("Edit of the form: %v", err)
		}
		if seen, err := h.Seen(ctx, hd.ID); err != nil || !strings.Contains(seen, folded) || strings.Contains(seen, question) {
			t.Errorf("Seen after folding the form = %q, %v; want %q only", seen, err, folded)
		}
	}
}

// testReact: a Reactor's reaction shows on a message, once however often
// it is added, in order, and goes away with Unreact; removing one not
// there is no error; a person's reaction comes back as Inbound.Reaction
// (where the harness can react).
func testReact(t *testing.T, h Harness) {
	r, ok := channels.As[channels.Reactor](h.Adapter)
	if !ok {
		t.Skip("not a Reactor")
	}
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	author := h.author(channels.Author{ID: "u-reactor", Name: "Reactor"})
	if h.React != nil {
		// A person's message first: on some platforms it makes the
		// thread the app's.
		if err := h.Inject(ctx, author, "react check"); err != nil {
			t.Fatalf("Inject: %v", err)
		}
		run.next(ctx, t)
	}
	hd, _ := postSeen(ctx, t, h, channels.Message{Kind: channels.KindText, Text: "react to me"})
	for _, e := range []string{"👀", "👀", "✅"} {
		if err := r.React(ctx, hd, e); err != nil {
			t.Fatalf("React(%s): %v", e, err)
		}
	}
	if got, err := h.Reactions(ctx, hd); err != nil || !slices.Equal(got, []string{"👀", "✅"}) {
		t.Errorf("reactions = %q, %v; want [👀 ✅]", got, err)
	}
	for range 2 {
		if err := r.Unreact(ctx, hd, "👀"); err != nil {
			t.Fatalf("Unreact: %v", err)
		}
	}
	if got, err := h.Reactions(ctx, hd); err != nil || !slices.Equal(got, []string{"✅"}) {
		t.Errorf("reactions after Unreact = %q, %v; want [✅]", got, err)
	}
	if h.React == nil {
		return
	}
	if err := h.React(ctx, author, hd, "🛑"); err != nil {
		t.Fatalf("React (a person): %v", err)
	}
	in := run.next(ctx, t)
	if in.Reaction == nil || in.Reaction.Message != hd.ID || in.Reaction.Emoji != "🛑" || in.Reaction.Removed {
		t.Errorf("inbound after a person's 🛑 = %+v, want the reaction 🛑 on %q", in, hd.ID)
	}
}
