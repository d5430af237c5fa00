package channeltest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// testPromptMany: a choice of many options (a select menu on platforms
// that have one) is shown, and a pick of the last comes back.
func testPromptMany(t *testing.T, h Harness) {
	pr, ok := h.Adapter.(channels.Prompter)
	if !ok {
		t.Skip("not a Prompter")
	}
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	var opts []channels.Option
	for i := range 12 {
		opts = append(opts, channels.Option{ID: fmt.Sprintf("model-%d", i), Label: fmt.Sprintf("Model %d", i)})
	}
	hd, err := pr.Prompt(ctx, h.Thread, channels.Choice{Text: "Which model?", Options: opts})
	if err != nil {
		t.Fatalf("Prompt of 12 options: %v", err)
	}
	checkHandle(t, "Prompt", h, hd)
	author := h.author(channels.Author{ID: "u-clicker", Name: "Clicker"})
	if err := h.Click(ctx, author, hd, "model-11"); err != nil {
		t.Fatalf("Click: %v", err)
	}
	in := run.next(ctx, t)
	if in.Choice == nil || in.Choice.Prompt.ID != hd.ID || in.Choice.OptionID != "model-11" {
		t.Fatalf("inbound after the pick = %+v, want the choice model-11 of the prompt", in)
	}
}

// testForm: a form's question is shown.
func testForm(t *testing.T, h Harness) {
	fm, ok := h.Adapter.(channels.Former)
	if !ok {
		t.Skip("not a Former")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	const question = "Which colour should the button be?"
	hd, err := fm.Form(ctx, h.Thread, channels.Form{
		Title: "Colour",
		Text:  question,
		Fields: []channels.Field{
			{ID: "colour", Label: "Colour", Kind: channels.FieldChoice, Required: true, Options: []channels.Option{{ID: "red", Label: "Red"}, {ID: "blue", Label: "Blue"}}},
			{ID: "why", Label: "Why", Kind: channels.FieldText},
		},
	})
	if err != nil {
		t.Fatalf("Form: %v", err)
	}
	checkHandle(t, "Form", h, hd)
	seen, err := h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after Form: %v", hd.ID, err)
	}
	if !strings.Contains(seen, question) {
		t.Errorf("Seen after Form = %q, want it to contain %q", seen, question)
	}
}

// testReact: the app's reaction comes and goes.
func testReact(t *testing.T, h Harness) {
	r, ok := h.Adapter.(channels.Reactor)
	if !ok {
		t.Skip("not a Reactor")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	hd, err := h.Adapter.Post(ctx, h.Thread, channels.Message{Kind: channels.KindText, Text: "react to me"})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if err := r.React(ctx, hd, "👀"); err != nil {
		t.Fatalf("React: %v", err)
	}
	if h.Reactions != nil {
		got, err := h.Reactions(ctx, hd.ID)
		if err != nil || !slices.Contains(got, "👀") {
			t.Errorf("reactions after React = %q, %v; want 👀", got, err)
		}
	}
	if err := r.Unreact(ctx, hd, "👀"); err != nil {
		t.Fatalf("Unreact: %v", err)
	}
	if h.Reactions != nil {
		got, err := h.Reactions(ctx, hd.ID)
		if err != nil || slices.Contains(got, "👀") {
			t.Errorf("reactions after Unreact = %q, %v; want no 👀", got, err)
		}
	}
}

// testCommands: the gateway's commands can be set.
func testCommands(t *testing.T, h Harness) {
	c, ok := h.Adapter.(channels.Commander)
	if !ok {
		t.Skip("not a Commander")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	if err := c.SetCommands(ctx, channels.Commands()); err != nil {
		t.Fatalf("SetCommands: %v", err)
	}
}
