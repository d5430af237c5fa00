package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func TestAnswer(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	a.replyWait = testWait // the handler below replies at once
	in := serve(t, a, func(ctx context.Context, ev channels.Inbound) {
		if ev.Choice != nil && ev.Author.Name == "replied" {
			ev.Reply(ctx, "Thanks, noted.")
		}
	})
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	h, err := a.Prompt(ctx, ref(id), channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "allow", Label: "Allow"}, {ID: "reject", Label: "Reject"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/threads/" + id + "/prompts/" + string(h.ID) + "/answer"

	r := c.do(ctx, t, "POST", path, map[string]string{"author": "replied", "optionId": "allow"})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	var ack idBody
	r.decode(t, &ack)
	if ack.Reply != "Thanks, noted." || ack.ID == "" {
		t.Errorf("answer response = %+v, want an id and the reply", ack)
	}
	ev := in.next(t)
	want := &channels.ChoiceAnswer{Prompt: h, OptionID: "allow"}
	if diff := cmp.Diff(want, ev.Choice); diff != "" {
		t.Errorf("Inbound.Choice (-want +got):\n%s", diff)
	}
	if !cmp.Equal(ev.Author, channels.Author{ID: "web:local", Name: "replied"}) || ev.Thread != ref(id) || ev.ID != channels.MessageID(ack.ID) {
		t.Errorf("Inbound = %+v, want author web:local (replied) in thread %s with id %s", ev, id, ack.ID)
	}

	tests := []struct {
		name    string
		path    string
		body    map[string]string
		status  int
		errText string
	}{
		{"unknown option", path, map[string]string{"author": "ann", "optionId": "maybe"}, http.StatusBadRequest, `the prompt has no option "maybe"`},
		{"missing option", path, map[string]string{"author": "ann"}, http.StatusBadRequest, `"optionId" is required`},
		{"unknown message", "/api/threads/" + id + "/prompts/nope/answer", map[string]string{"author": "ann", "optionId": "allow"}, http.StatusNotFound, "no such message in this thread"},
		{"unknown thread", "/api/threads/nope/prompts/" + string(h.ID) + "/answer", map[string]string{"author": "ann", "optionId": "allow"}, http.StatusNotFound, "no such thread"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(ctx, t, "POST", tc.path, tc.body)
			if r.status != tc.status || r.errorText() != tc.errText {
				t.Errorf("answer = %d %q, want %d %q", r.status, r.errorText(), tc.status, tc.errText)
			}
			in.empty(t)
		})
	}

	// Once the gateway edits the prompt, it cannot be answered again.
	if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindPermission, Text: "Allowed"}); err != nil {
		t.Fatal(err)
	}
	r = c.do(ctx, t, "POST", path, map[string]string{"author": "ann", "optionId": "allow"})
	if r.status != http.StatusConflict {
		t.Errorf("answer after the prompt was edited = %d %s, want 409", r.status, r.body)
	}
	in.empty(t)

	// Answering a plain message is a conflict too.
	plain, _ := a.Post(ctx, ref(id), channels.Message{Kind: channels.KindText, Text: "hi"})
	r = c.do(ctx, t, "POST", "/api/threads/"+id+"/prompts/"+string(plain.ID)+"/answer", map[string]string{"author": "ann", "optionId": "allow"})
	if r.status != http.StatusConflict {
		t.Errorf("answer to a text message = %d %s, want 409", r.status, r.body)
	}
}

func TestAnswerLateReply(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	a.replyWait = time.Millisecond
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	h, err := a.Prompt(ctx, ref(id), channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := c.do(ctx, t, "POST", "/api/threads/"+id+"/prompts/"+string(h.ID)+"/answer", map[string]string{"author": "ann", "optionId": "allow"})
	var ack idBody
	r.decode(t, &ack)
	if r.status != http.StatusAccepted || ack.Reply != "" {
		t.Fatalf("answer = %d %s, want 202 without a reply", r.status, r.body)
	}
	ev := in.next(t)
	// The response went out: a reply now becomes a notice in the thread.
	if err := ev.Reply(ctx, "Sorry, only approvers can answer this prompt."); err != nil {
		t.Fatalf("late Reply: %v", err)
	}
	b, _ := c.messages(ctx, id)
	last := b.Messages[len(b.Messages)-1]
	want := message{Role: "system", Author: "gateway", Kind: "notice", Text: "Sorry, only approvers can answer this prompt.", HTML: "<p>Sorry, only approvers can answer this prompt.</p>\n"}
	if diff := cmp.Diff(want, last, ignoreVolatile); diff != "" {
		t.Errorf("message after a late Reply (-want +got):\n%s", diff)
	}
}

func TestStop(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	r := c.do(ctx, t, "POST", "/api/threads/"+id+"/stop", map[string]string{"author": "ann"})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	ev := in.next(t)
	if !ev.Stop || ev.Text != "" || !cmp.Equal(ev.Author, channels.Author{ID: "web:local", Name: "ann"}) || ev.Thread != ref(id) || ev.ID == "" || ev.Choice != nil {
		t.Errorf("Inbound after stop = %+v, want an explicit stop (Stop, no text) from web:local (ann) with an id", ev)
	}
	if ev.Intent() != channels.IntentStop {
		t.Errorf("Intent() after stop = %v, want stop", ev.Intent())
	}
	if b, _ := c.messages(ctx, id); len(b.Messages) != 0 {
		t.Errorf("messages after stop = %+v, want none (a stop is not a message)", b.Messages)
	}
}

// TestCommands: a message that starts with a gateway command ("/stop")
// arrives as that command; another slash command ("/compact", the agent's
// own) and any other text arrive as a message, unchanged.
func TestCommands(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	for _, tc := range []struct {
		text    string
		intent  channels.IntentKind
		command *channels.Command
	}{
		{"/stop", channels.IntentCommand, &channels.Command{Name: channels.CommandStop}},
		{" /Stop the tests", channels.IntentCommand, &channels.Command{Name: channels.CommandStop, Args: "the tests"}},
		{"/compact", channels.IntentMessage, nil},
		{"/stopwatch", channels.IntentMessage, nil},
		{"please /stop", channels.IntentMessage, nil},
	} {
		r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]string{"author": "ann", "text": tc.text})
		if err := r.want(http.StatusAccepted); err != nil {
			t.Fatal(err)
		}
		ev := in.next(t)
		if ev.Intent() != tc.intent || ev.Text != tc.text || !cmp.Equal(ev.Command, tc.command) {
			t.Errorf("%q arrived as %v, text %q, command %+v; want %v, the text unchanged, command %+v", tc.text, ev.Intent(), ev.Text, ev.Command, tc.intent, tc.command)
		}
	}
}
