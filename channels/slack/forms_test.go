package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

func ptr(v float64) *float64 { return &v }

// TestFormModal: a form is a message with Answer and Decline; Answer
// opens a modal with one input per field (text, number, select,
// multi-select, checkbox); a submission with a wrong value is answered
// in the modal with errors and delivers nothing; a good one arrives as
// Inbound.Form accept with the values by field id; closing the modal is
// a cancel; Decline is a decline; folding the form forgets it.
func TestFormModal(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	form := channels.Form{Title: "Deploy settings", Text: "How should I deploy?", Fields: []channels.Field{
		{ID: "name", Label: "Name", Kind: channels.FieldText, Required: true},
		{ID: "replicas", Label: "Replicas", Kind: channels.FieldNumber, Min: ptr(1), Max: ptr(9)},
		{ID: "region", Label: "Region", Kind: channels.FieldChoice, Options: []channels.Option{{ID: "eu", Label: "Europe"}, {ID: "us", Label: "US"}}},
		{ID: "checks", Label: "Checks", Kind: channels.FieldMulti, Options: []channels.Option{{ID: "lint"}, {ID: "test"}, {ID: "e2e"}}},
		{ID: "dry", Label: "Dry run", Kind: channels.FieldBool},
	}}
	h, err := a.Form(ctx, th, form)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.message(fakeChannel, string(h.ID))
	if m.ThreadTS != fakeThread || !strings.Contains(m.Text, "How should I deploy?") {
		t.Errorf("form message = %+v, want the question in the thread", m)
	}
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), formAnswer); err != nil {
		t.Fatal(err)
	}
	if err := f.waitFor(ctx, "a modal", func() bool { return len(f.views) == 1 }); err != nil {
		t.Fatal(err)
	}
	v := f.openedViews()[0]
	for _, want := range []string{`"plain_text_input"`, `"number_input"`, `"static_select"`, `"multi_static_select"`, `"checkboxes"`, `"notify_on_close":true`} {
		if !strings.Contains(string(v.View), want) {
			t.Errorf("modal lacks %s: %s", want, v.View)
		}
	}
	if v.User != "U0ANN" {
		t.Errorf("modal opened for %q, want U0ANN", v.User)
	}

	env, err := f.submitView(ctx, v, map[string]string{"Name": "web", "Replicas": "12"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.waitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	var ack struct {
		ResponseAction string            `json:"response_action"`
		Errors         map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(f.ackPayload(env), &ack); err != nil || ack.ResponseAction != "errors" || !strings.Contains(ack.Errors["field-1"], "at most 9") {
		t.Errorf("ack of a bad submission = %s, want errors on the replicas field", f.ackPayload(env))
	}

	env, err = f.submitView(ctx, v, map[string]string{"Name": "web", "Replicas": "3", "Region": "us", "Checks": "lint,e2e", "Dry run": "true"})
	if err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx) // the bad submission delivered nothing: this is the good one
	if p := f.ackPayload(env); p != nil {
		t.Errorf("ack of a good submission = %s, want none (the modal closes)", p)
	}
	want := channels.FormAnswer{Form: h, Action: channels.FormAccept, Values: map[string][]string{
		"name": {"web"}, "replicas": {"3"}, "region": {"us"}, "checks": {"lint", "e2e"}, "dry": {"true"}}}
	if in.Intent() != channels.IntentForm || in.Author.ID != "U0ANN" || in.Thread != th {
		t.Fatalf("inbound = %v by %q in %v, want a form answer by Ann in %v", in.Intent(), in.Author.ID, in.Thread, th)
	}
	if diff := cmp.Diff(want, *in.Form); diff != "" {
		t.Errorf("form answer (-want +got):\n%s", diff)
	}

	if _, err := f.closeView(ctx, v); err != nil {
		t.Fatal(err)
	}
	if in := r.next(ctx); in.Form == nil || in.Form.Action != channels.FormCancel || in.Form.Form != h {
		t.Errorf("closing the modal = %+v, want a cancel of %v", in.Form, h)
	}
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), formDecline); err != nil {
		t.Fatal(err)
	}
	if in := r.next(ctx); in.Form == nil || in.Form.Action != channels.FormDecline || in.Choice != nil {
		t.Errorf("Decline = form %+v choice %+v, want a decline", in.Form, in.Choice)
	}

	if err := a.Edit(ctx, h, channels.Message{Text: "Answered: web"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.form(fakeChannel, string(h.ID)); ok {
		t.Error("the folded form is still open")
	}
}

// TestFormURL: a URL form has a link button, Done and Decline; Done is an
// accept without values.
func TestFormURL(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	h, err := a.Form(ctx, th, channels.Form{Title: "Sign in", Text: "Sign in to continue.", URL: "https://example.com/login"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.message(fakeChannel, string(h.ID))
	if !strings.Contains(string(m.Blocks), `"url":"https://example.com/login"`) || strings.Contains(string(m.Blocks), formAnswer) {
		t.Errorf("URL form blocks = %s, want a link button and no Answer", m.Blocks)
	}
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), formDone); err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx)
	if in.Form == nil || !cmp.Equal(*in.Form, channels.FormAnswer{Form: h, Action: channels.FormAccept, Values: map[string][]string{}}) {
		t.Errorf("Done = %+v, want an accept without values", in.Form)
	}
	if len(f.openedViews()) != 0 {
		t.Error("a URL form opened a modal")
	}
}

// TestFormNoLongerOpen: a click on the button of a form the adapter no
// longer knows (forgotten over a restart) delivers nothing and tells the
// person privately.
func TestFormNoLongerOpen(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	h, err := a.Form(ctx, th, channels.Form{Text: "Go on?", Fields: []channels.Field{{ID: "x", Label: "X", Kind: channels.FieldText}}})
	if err != nil {
		t.Fatal(err)
	}
	a.formFolded(h) // as after a restart
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), formDecline); err != nil {
		t.Fatal(err)
	}
	if err := f.waitFor(ctx, "a private note", func() bool {
		for _, e := range f.ephemerals {
			if e.User == "U0ANN" && e.Text == "This question is no longer open." {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: fakeThread, text: "marker", mention: true})
	if in := r.next(ctx); in.Text != "marker" {
		t.Errorf("inbound = %+v, want nothing before the marker", in)
	}
}
