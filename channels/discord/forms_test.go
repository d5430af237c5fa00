package discord

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// testForm asks for a name (text, required), a count (number 1 to 10), a
// colour (a choice, required) and toppings (a multi).
func testForm() channels.Form {
	one, ten := 1.0, 10.0
	return channels.Form{
		Title: "Order",
		Text:  "What would you like?",
		Fields: []channels.Field{
			{ID: "colour", Label: "Colour", Kind: channels.FieldChoice, Required: true, Options: []channels.Option{{ID: "red", Label: "Red"}, {ID: "blue", Label: "Blue"}}},
			{ID: "name", Label: "Name", Kind: channels.FieldText, Required: true},
			{ID: "count", Label: "How many", Kind: channels.FieldNumber, Min: &one, Max: &ten},
			{ID: "toppings", Label: "Toppings", Kind: channels.FieldMulti, Options: []channels.Option{{ID: "nuts", Label: "Nuts"}, {ID: "cream", Label: "Cream"}}},
		},
	}
}

// ackData decodes the data of interaction token's response.
func ackData(t *testing.T, f *fakeDiscord, token string) (typ int, content string, flags int) {
	t.Helper()
	it := f.interaction(token)
	var b struct {
		Data struct {
			Content string `json:"content"`
			Flags   int    `json:"flags"`
		} `json:"data"`
	}
	json.Unmarshal(it.AckBody, &b)
	return it.AckType, b.Data.Content, b.Data.Flags
}

// TestFormModal: a form shows its choices as selects in the message and
// its text and number fields in a modal that "Answer" opens; a number
// that is none is refused privately and the form stays open; a valid
// submit arrives as Inbound.Form with every value.
func TestFormModal(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	h, err := s.a.Form(ctx, f.threadRef(), testForm())
	if err != nil {
		t.Fatalf("Form: %v", err)
	}
	m, _ := f.message(string(h.ID))
	if !strings.Contains(m.Content, "Order") || !strings.Contains(m.Content, "What would you like?") {
		t.Errorf("form message %q, want the title and the question", m.Content)
	}
	menu, values, ok := selectMenu(m)
	if !ok || !slices.Equal(values, []string{"red", "blue"}) {
		t.Fatalf("first select = %q %q, want the colours (components %s)", menu, values, m.Components)
	}
	f.pick(ann, f.thread, string(h.ID), menu, "blue")
	tok := f.click(ann, f.thread, string(h.ID), formAnswerID)
	f.waitFor(ctx, "the modal", func() bool { return !f.interactions[tok].Acked.IsZero() })
	modalID, inputs := f.modalInputs(tok)
	if typ, _, _ := ackData(t, f, tok); typ != 9 || len(inputs) != 2 {
		t.Fatalf("Answer was answered with type %d and inputs %q, want a modal (9) of 2 inputs", typ, inputs)
	}
	// A count that is no number: refused privately, nothing delivered.
	bad := f.submit(ann, f.thread, string(h.ID), modalID, map[string]string{inputs[0]: "Ann", inputs[1]: "many"})
	f.waitFor(ctx, "the refusal", func() bool { return !f.interactions[bad].Acked.IsZero() })
	if typ, content, flags := ackData(t, f, bad); typ != 4 || flags&64 == 0 || !strings.Contains(content, "not a number") {
		t.Errorf("a bad number was answered with type %d flags %d %q, want a private refusal", typ, flags, content)
	}
	f.submit(ann, f.thread, string(h.ID), modalID, map[string]string{inputs[0]: "Ann", inputs[1]: "7"})
	in := s.next(t)
	if in.Intent() != channels.IntentForm || in.Form.Action != channels.FormAccept || in.Form.Form.ID != h.ID || in.Author.ID != ann.ID {
		t.Fatalf("inbound = %+v, want Ann's answer to the form", in)
	}
	want := map[string][]string{"colour": {"blue"}, "name": {"Ann"}, "count": {"7"}}
	if len(in.Form.Values) != len(want) {
		t.Errorf("values = %q, want %q", in.Form.Values, want)
	}
	for k, v := range want {
		if !slices.Equal(in.Form.Values[k], v) {
			t.Errorf("values[%s] = %q, want %q", k, in.Form.Values[k], v)
		}
	}
	// Folded, the form is closed.
	if err := s.a.Edit(ctx, h, channels.Message{Text: "Answered"}); err != nil {
		t.Fatal(err)
	}
	late := f.click(bob, f.thread, string(h.ID), formAnswerID)
	f.waitFor(ctx, "the late answer", func() bool { return !f.interactions[late].Acked.IsZero() })
	if _, content, _ := ackData(t, f, late); !strings.Contains(content, "no longer open") {
		t.Errorf("a click on a folded form was answered %q", content)
	}
}

// TestFormRequiredChoice: a form of choices only answers from "Answer"
// at once, once its required choice is picked; "Decline" declines.
func TestFormRequiredChoice(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	form := testForm()
	form.Fields = []channels.Field{form.Fields[0], {ID: "ok", Label: "Sure?", Kind: channels.FieldBool}}
	h, err := s.a.Form(ctx, f.threadRef(), form)
	if err != nil {
		t.Fatalf("Form: %v", err)
	}
	tok := f.click(ann, f.thread, string(h.ID), formAnswerID)
	f.waitFor(ctx, "the refusal", func() bool { return !f.interactions[tok].Acked.IsZero() })
	if typ, content, _ := ackData(t, f, tok); typ != 4 || !strings.Contains(content, "Colour") {
		t.Errorf("an answer without the required colour was answered with type %d %q", typ, content)
	}
	m, _ := f.message(string(h.ID))
	menu, _, _ := selectMenu(m)
	f.pick(ann, f.thread, string(h.ID), menu, "red")
	f.pick(ann, f.thread, string(h.ID), formFieldID+"1", "false")
	f.click(ann, f.thread, string(h.ID), formAnswerID)
	in := s.next(t)
	if in.Form == nil || in.Form.Action != channels.FormAccept || !slices.Equal(in.Form.Values["colour"], []string{"red"}) || !slices.Equal(in.Form.Values["ok"], []string{"false"}) {
		t.Fatalf("inbound = %+v, want the colour red and ok false", in.Form)
	}
	f.click(bob, f.thread, string(h.ID), formDeclineID)
	if in := s.next(t); in.Form == nil || in.Form.Action != channels.FormDecline || in.Author.ID != bob.ID {
		t.Fatalf("inbound = %+v, want Bob's decline", in.Form)
	}
}

// TestFormURL: a URL form is a link button, "Done" and "Decline"; Done
// accepts.
func TestFormURL(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	h, err := s.a.Form(ctx, f.threadRef(), channels.Form{Title: "Sign in", Text: "Sign in to continue", URL: "https://example.com/login"})
	if err != nil {
		t.Fatalf("Form: %v", err)
	}
	m, _ := f.message(string(h.ID))
	if !strings.Contains(string(m.Components), `"url":"https://example.com/login"`) || !strings.Contains(string(m.Components), formDoneID) {
		t.Errorf("components %s, want a link button and Done", m.Components)
	}
	f.click(ann, f.thread, string(h.ID), formDoneID)
	if in := s.next(t); in.Form == nil || in.Form.Action != channels.FormAccept || len(in.Form.Values) != 0 {
		t.Fatalf("inbound = %+v, want an accept without values", in.Form)
	}
}

// TestFormValues: numbers must be numbers within their bounds, texts
// within their lengths, required fields filled; defaults stand for
// choices not picked.
func TestFormValues(t *testing.T) {
	one, ten, three := 1.0, 10.0, 3.0
	f := channels.Form{Fields: []channels.Field{
		{ID: "n", Label: "N", Kind: channels.FieldNumber, Min: &one, Max: &ten, Required: true},
		{ID: "s", Label: "S", Kind: channels.FieldText, Max: &three},
		{ID: "c", Label: "C", Kind: channels.FieldMulti, Default: "a,b", Options: []channels.Option{{ID: "a"}, {ID: "b"}}},
	}}
	for _, tc := range []struct {
		texts map[int]string
		why   string // a part of the refusal; "" accepted
	}{
		{map[int]string{0: "2.5", 1: "abc"}, ""},
		{map[int]string{0: " 10 "}, ""},
		{map[int]string{0: "0"}, "at least 1"},
		{map[int]string{0: "11"}, "at most 10"},
		{map[int]string{0: "1e"}, "not a number"},
		{map[int]string{1: "ab"}, "required"},
		{map[int]string{0: "3", 1: "abcd"}, "at most 3 characters"},
	} {
		values, why := formValues(f, nil, tc.texts)
		if tc.why == "" {
			if why != "" || values["n"] == nil || !slices.Equal(values["c"], []string{"a", "b"}) {
				t.Errorf("formValues(%v) = %q, %q; want accepted with the default choices", tc.texts, values, why)
			}
			continue
		}
		if !strings.Contains(why, tc.why) || values != nil {
			t.Errorf("formValues(%v) = %q, %q; want a refusal saying %q", tc.texts, values, why, tc.why)
		}
	}
}
