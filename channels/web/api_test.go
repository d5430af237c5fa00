package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreVolatile leaves ids and times out of message comparisons.
var ignoreVolatile = cmpopts.IgnoreFields(message{}, "ID", "Time", "Updated")

func TestThreadsAPI(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()

	r := c.do(ctx, t, "POST", "/api/threads", map[string]string{"title": "  Fix the build  "})
	if err := r.want(http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	var first threadInfo
	r.decode(t, &first)
	if first.Title != "Fix the build" || first.ID == "" || first.Created.IsZero() {
		t.Errorf("created thread = %+v, want an id, a time and the trimmed title", first)
	}
	second := c.newThread(ctx, t)

	r = c.do(ctx, t, "GET", "/api/threads", nil)
	var list threadsBody
	r.decode(t, &list)
	var got []string
	for _, th := range list.Threads {
		got = append(got, th.ID+" "+th.Title)
	}
	if want := []string{second + " ", first.ID + " Fix the build"}; !cmp.Equal(got, want) {
		t.Errorf("GET /api/threads ids and titles (-want +got):\n%s", cmp.Diff(want, got))
	}

	// The first prompt titles an untitled thread.
	r = c.do(ctx, t, "POST", "/api/threads/"+second+"/messages", map[string]string{"author": "ann", "text": "\n  list the files\nplease"})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	r = c.do(ctx, t, "GET", "/api/threads", nil)
	r.decode(t, &list)
	if got, want := list.Threads[0].Title, "list the files"; got != want {
		t.Errorf("title after the first prompt = %q, want %q", got, want)
	}
}

func TestPostMessage(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)

	tests := []struct {
		name       string
		body       map[string]string
		wantAuthor channels.Author
	}{
		// Without tokens, on loopback, everyone is the one local user;
		// the name is a label.
		{"name only", map[string]string{"author": " alice ", "text": "hello **agent**"}, channels.Author{ID: "web:local", Name: "alice"}},
		{"no name", map[string]string{"text": "hello **agent**"}, channels.Author{ID: "web:local", Name: "guest"}},
		{"with the right author id", map[string]string{"author": "Bob", "authorId": "web:local", "text": "hello **agent**"}, channels.Author{ID: "web:local", Name: "Bob"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", tc.body)
			if err := r.want(http.StatusAccepted); err != nil {
				t.Fatal(err)
			}
			var ack idBody
			r.decode(t, &ack)
			ev := in.next(t)
			if got, want := ev.Thread, (channels.ThreadRef{Platform: "web", Channel: "local", Thread: id}); got != want {
				t.Errorf("Inbound.Thread = %v, want %v", got, want)
			}
			if diff := cmp.Diff(tc.wantAuthor, ev.Author); diff != "" {
				t.Errorf("Inbound.Author (-want +got):\n%s", diff)
			}
			if ev.Text != tc.body["text"] || ev.ID != channels.MessageID(ack.ID) || ev.Choice != nil || ev.Reply == nil {
				t.Errorf("Inbound = %+v, want text %q, id %q, no choice, a Reply", ev, tc.body["text"], ack.ID)
			}
			b, err := c.messages(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			last := b.Messages[len(b.Messages)-1]
			want := message{ID: ack.ID, Role: "user", Author: tc.wantAuthor.Name, Kind: "text", Text: tc.body["text"]}
			if diff := cmp.Diff(want, last, cmpopts.IgnoreFields(message{}, "Time", "Updated")); diff != "" {
				t.Errorf("stored message (-want +got):\n%s", diff)
			}

			// Reply appends a notice everyone in the thread sees.
			if err := ev.Reply(ctx, "Sorry, no access."); err != nil {
				t.Fatalf("Reply: %v", err)
			}
			b, _ = c.messages(ctx, id)
			last = b.Messages[len(b.Messages)-1]
			want = message{Role: "system", Author: "gateway", Kind: "notice", Text: "Sorry, no access.", HTML: "<p>Sorry, no access.</p>\n"}
			if diff := cmp.Diff(want, last, ignoreVolatile); diff != "" {
				t.Errorf("message after Reply (-want +got):\n%s", diff)
			}
		})
	}
}

// Files sent with a message reach the gateway read like the platforms'
// attachments; the thread shows their names.
func TestPostMessageWithFiles(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	b64 := base64.StdEncoding.EncodeToString
	r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]any{
		"author": "ann",
		"files": []map[string]string{
			{"name": "trace.log", "type": "text/plain", "data": b64([]byte("panic: boom\n"))},
			{"name": "shot.png", "type": "image/png", "data": b64(png)},
			{"name": "song.mp3", "type": "audio/mpeg", "data": b64([]byte("ID3"))},
		},
	})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	ev := in.next(t)
	want := []channels.File{
		{Name: "trace.log", ContentType: "text/plain", Size: 12, Text: "panic: boom\n"},
		{Name: "shot.png", ContentType: "image/png", Size: len(png), Data: png},
		{Name: "song.mp3", ContentType: "audio/mpeg", Size: 3, Skipped: "not a text or image file"},
	}
	if diff := cmp.Diff(want, ev.Files); diff != "" || ev.Text != "" {
		t.Errorf("Inbound text %q, files (-want +got):\n%s", ev.Text, diff)
	}
	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Messages[len(b.Messages)-1].Text, "📎 trace.log\n📎 shot.png\n📎 song.mp3 (not sent: not a text or image file)"; got != want {
		t.Errorf("stored message %q, want %q", got, want)
	}
}

func TestOutboundInAPIAndEvents(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	th := ref(id)

	s := c.openStream(t, "/api/threads/"+id+"/events")
	if s.status != http.StatusOK || !strings.HasPrefix(s.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: status %d, type %q, want 200 text/event-stream", s.status, s.header.Get("Content-Type"))
	}
	var list threadsBody
	json.Unmarshal([]byte(s.next(t, "threads").data), &list)
	if len(list.Threads) != 1 || list.Threads[0].ID != id {
		t.Errorf("first threads event = %+v, want the one thread", list)
	}
	if got := s.next(t, "typing").data; got != `{"typing":false}` {
		t.Errorf("first typing event = %s, want not typing", got)
	}

	text, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "Hel"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, text, channels.Message{Kind: channels.KindText, Text: "Hello there"}); err != nil {
		t.Fatal(err)
	}
	tool, err := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · done"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Typing(ctx, th); err != nil {
		t.Fatal(err)
	}
	prompt, err := a.Prompt(ctx, th, channels.Choice{Text: "Allow ls?", Options: []channels.Option{
		{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "reject", Label: "Reject", Style: "danger"},
	}})
	if err != nil {
		t.Fatal(err)
	}

	opts := []option{{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "reject", Label: "Reject", Style: "danger"}}
	wantEvents := []message{
		{ID: string(text.ID), Role: "assistant", Author: "agent", Kind: "text", Text: "Hel", HTML: "<p>Hel</p>\n"},
		{ID: string(text.ID), Role: "assistant", Author: "agent", Kind: "text", Text: "Hello there", Edits: 1, HTML: "<p>Hello there</p>\n"},
		{ID: string(tool.ID), Role: "assistant", Author: "agent", Kind: "tool", Key: "call_1", Text: "🛠️ Run ls · running", HTML: "<p>🛠️ Run ls · running</p>\n"},
		{ID: string(tool.ID), Role: "assistant", Author: "agent", Kind: "tool", Key: "call_1", Text: "🛠️ Run ls · done", Edits: 1, HTML: "<p>🛠️ Run ls · done</p>\n"},
		{ID: string(prompt.ID), Role: "assistant", Author: "agent", Kind: "permission", Text: "Allow ls?", Options: opts, HTML: "<p>Allow ls?</p>\n"},
	}
	var gotEvents []message
	for range wantEvents {
		gotEvents = append(gotEvents, s.nextMessage(t))
	}
	if diff := cmp.Diff(wantEvents, gotEvents, cmpopts.IgnoreFields(message{}, "Time", "Updated")); diff != "" {
		t.Errorf("message events (-want +got):\n%s", diff)
	}

	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]message{wantEvents[1], wantEvents[3], wantEvents[4]}, b.Messages, cmpopts.IgnoreFields(message{}, "Time", "Updated")); diff != "" {
		t.Errorf("GET messages (-want +got):\n%s", diff)
	}
	if !b.Typing {
		t.Errorf("GET messages typing = false after Typing, want true")
	}

	// Editing the prompt answers it: its options go.
	if err := a.Edit(ctx, prompt, channels.Message{Kind: channels.KindPermission, Text: "✅ Allowed by ann"}); err != nil {
		t.Fatal(err)
	}
	if m := s.nextMessage(t); m.ID != string(prompt.ID) || len(m.Options) != 0 || m.Text != "✅ Allowed by ann" {
		t.Errorf("event after editing the prompt = %+v, want its new text without options", m)
	}
	if err := a.StopTyping(ctx, th); err != nil {
		t.Fatal(err)
	}
	if got := s.next(t, "typing").data; got != `{"typing":false}` {
		t.Errorf("typing event after StopTyping = %s, want false", got)
	}

	// A new thread shows up in the list of every stream.
	other := c.newThread(ctx, t)
	// Typing changes also send their thread's entry (it shows who is
	// busy): the new one comes as a "thread" event of its own.
	for {
		var one threadInfo
		json.Unmarshal([]byte(s.next(t, "thread").data), &one)
		if one.ID == other {
			break
		}
	}

	// A stream's reconnect starts with the whole state.
	again := c.openStream(t, "/api/threads/"+id+"/events")
	again.next(t, "threads")
	var replayed []message
	for range 3 {
		replayed = append(replayed, again.nextMessage(t))
	}
	if got := []string{replayed[0].Text, replayed[1].Text, replayed[2].Text}; !cmp.Equal(got, []string{"Hello there", "🛠️ Run ls · done", "✅ Allowed by ann"}) {
		t.Errorf("messages on reconnect = %q, want the current texts", got)
	}
}

// The list streams carry deltas: a change in one thread sends one small
// "thread" event with that thread's entry alone, however many threads
// there are; a deleted thread one "threadRemoved" naming it.
func TestListEvents(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	var ids []string
	for i := range 20 {
		ids = append(ids, c.newThread(ctx, t))
		c.do(ctx, t, "PATCH", "/api/threads/"+ids[i], map[string]string{"title": strings.Repeat("a long title ", 6)})
	}
	s := c.openStream(t, "/api/events")
	var list threadsBody
	json.Unmarshal([]byte(s.next(t, "threads").data), &list)
	if len(list.Threads) != 20 {
		t.Fatalf("first threads event has %d threads, want 20", len(list.Threads))
	}
	id := c.newThread(ctx, t)
	ev := s.next(t, "thread")
	var one threadInfo
	if err := json.Unmarshal([]byte(ev.data), &one); err != nil {
		t.Fatal(err)
	}
	if one.ID != id || one.Activity <= list.Threads[0].Activity {
		t.Errorf("thread event after a new thread = %+v, want it, above %d", one, list.Threads[0].Activity)
	}
	if len(ev.data) > 300 {
		t.Errorf("thread event is %d bytes, want one entry (under 300): %s", len(ev.data), ev.data)
	}
	// A message in an older thread moves it up: its entry alone.
	if _, err := a.Post(ctx, ref(ids[3]), channels.Message{Kind: channels.KindText, Text: "done"}); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(s.next(t, "thread").data), &one)
	if one.ID != ids[3] || one.Title != list.Threads[len(list.Threads)-4].Title {
		t.Errorf("thread event after a message = %+v, want %s", one, ids[3])
	}
	if r := c.do(ctx, t, "DELETE", "/api/threads/"+ids[5], nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE = %d", r.status)
	}
	if got, want := s.next(t, "threadRemoved").data, `{"id":"`+ids[5]+`"}`; got != want {
		t.Errorf("threadRemoved = %s, want %s", got, want)
	}
	select {
	case ev := <-s.events:
		if ev.name == "threads" {
			t.Errorf("a whole list was sent after the first: %.200s", ev.data)
		}
	default:
	}
}

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

func TestAPIErrors(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	msgs := "/api/threads/" + id + "/messages"
	json := http.Header{"Content-Type": {"application/json"}}

	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		header  http.Header
		status  int
		errText string
	}{
		{"unknown thread messages", "GET", "/api/threads/nope/messages", nil, nil, 404, "no such thread"},
		{"unknown thread post", "POST", "/api/threads/nope/messages", map[string]string{"author": "a", "text": "x"}, nil, 404, "no such thread"},
		{"unknown thread stop", "POST", "/api/threads/nope/stop", map[string]string{"author": "a"}, nil, 404, "no such thread"},
		{"unknown thread events", "GET", "/api/threads/nope/events", nil, nil, 404, "no such thread"},
		{"bad JSON", "POST", msgs, `{"author": "a", "text": }`, nil, 400, "invalid JSON at byte 25: invalid character '}' looking for beginning of value"},
		{"cut JSON", "POST", msgs, `{"author": "a"`, nil, 400, "invalid JSON: the body ends in the middle of the object"},
		{"not an object", "POST", msgs, `["hi"]`, nil, 400, "invalid JSON: want an object, got array"},
		{"wrong type", "POST", msgs, `{"author": "a", "text": 3}`, nil, 400, `invalid JSON: "text" must be a string, got number`},
		{"unknown field", "POST", msgs, `{"author": "a", "txt": "x"}`, nil, 400, `invalid JSON: unknown field "txt"`},
		{"two objects", "POST", msgs, `{"author": "a", "text": "x"} {}`, nil, 400, "invalid JSON: unexpected data after the object"},
		{"empty body", "POST", msgs, "", json, 400, "the request body is empty, want a JSON object"},
		{"forged author id", "POST", msgs, map[string]string{"authorId": "web:boss", "text": "x"}, nil, 403, `your token is web:local's; "authorId" "web:boss" names someone else (who you are comes from the token, not the request)`},
		{"blank text", "POST", msgs, map[string]string{"author": "a", "text": " \n"}, nil, 400, `"text" is required (or "files")`},
		{"control in author", "POST", msgs, map[string]string{"author": "a\nb", "text": "x"}, nil, 400, `"author" must not contain control characters`},
		{"long text", "POST", msgs, map[string]string{"author": "a", "text": strings.Repeat("x", maxTextBytes+1)}, nil, 400, `"text" has 65537 bytes, at most 65536 are allowed`},
		{"huge body", "POST", msgs, map[string]string{"author": "a", "text": strings.Repeat("x", maxMessageBodyBytes)}, nil, 413, "the request body is larger than 12 MiB"},
		{"huge stop body", "POST", "/api/threads/" + id + "/stop", map[string]string{"author": strings.Repeat("x", maxBodyBytes)}, nil, 413, "the request body is larger than 1 MiB"},
		{"form body", "POST", msgs, "author=a&text=x", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415, "the request body must be JSON with Content-Type: application/json"},
		{"text/plain body", "POST", msgs, `{"author":"a","text":"x"}`, http.Header{"Content-Type": {"text/plain"}}, 415, "the request body must be JSON with Content-Type: application/json"},
		{"unknown endpoint", "GET", "/api/nothing", nil, nil, 404, "no such API endpoint: /api/nothing"},
		{"wrong method", "DELETE", "/api/threads", nil, nil, 405, "DELETE is not allowed here; allowed: GET, HEAD, POST"},
		{"long title", "POST", "/api/threads", map[string]string{"title": strings.Repeat("t", 201)}, nil, 400, `"title" has 201 characters, at most 200 are allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.try(ctx, tc.method, tc.path, tc.body, tc.header)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tc.status || r.errorText() != tc.errText {
				t.Errorf("%s %s = %d %s, want %d %q", tc.method, tc.path, r.status, r.body, tc.status, tc.errText)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("error Content-Type = %q, want JSON", ct)
			}
		})
	}
	in.empty(t)
}

func TestAccess(t *testing.T) {
	const token = "s3cret"
	a := New(Options{Listen: "127.0.0.1:0", Token: token})
	serve(t, a, nil)
	c := newClient(t, a)
	c.token = "" // each case sets its own credentials
	ctx := t.Context()
	port := a.Addr()[strings.LastIndex(a.Addr(), ":")+1:]

	tests := []struct {
		name   string
		path   string
		header http.Header
		status int
	}{
		{"no token", "/api/threads", nil, 401},
		{"wrong bearer", "/api/threads", http.Header{"Authorization": {"Bearer nope"}}, 401},
		{"bearer", "/api/threads", http.Header{"Authorization": {"Bearer " + token}}, 200},
		{"query", "/api/threads?token=" + token, nil, 200},
		{"wrong query", "/api/threads?token=s3cre", nil, 401},
		{"events without token", "/api/events", nil, 401},
		{"page is public", "/", nil, 200},
		{"foreign host", "/", http.Header{"Host": {"evil.example:" + port}}, 403},
		{"localhost", "/", http.Header{"Host": {"localhost:" + port}}, 200},
		{"foreign origin", "/api/threads?token=" + token, http.Header{"Origin": {"http://evil.example"}}, 403},
		{"same origin", "/api/threads?token=" + token, http.Header{"Origin": {"http://" + a.Addr()}}, 200},
		{"null origin", "/api/threads?token=" + token, http.Header{"Origin": {"null"}}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, "GET", c.base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			if h := tc.header.Get("Host"); h != "" {
				req.Host = h
			}
			res, err := c.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Errorf("GET %s = %d, want %d", tc.path, res.StatusCode, tc.status)
			}
			if tc.status == 401 && res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			// A wrong token is told apart from none.
			want := map[bool]string{false: "needs its access token", true: "this access token is not accepted here"}[strings.HasPrefix(tc.name, "wrong")]
			if tc.status == 401 && !strings.Contains(string(body), want) {
				t.Errorf("GET %s: 401 %s, want it to say %q", tc.path, body, want)
			}
		})
	}
}

func TestPage(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	r := c.do(t.Context(), t, "GET", "/", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET / = %d %q, want 200 HTML", r.status, r.header.Get("Content-Type"))
	}
	page := string(r.body)
	for _, want := range []string{`id="new-thread"`, `id="composer"`, `<textarea`, `id="send"`, `id="stop"`, `id="typing"`, `aria-live="polite"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// The icon is inline (a data: URL), not a resource to load.
	local := regexp.MustCompile(`<link rel="icon" href="data:[^"]*">`).ReplaceAllString(page, "")
	for _, external := range []string{"src=", "<link", "@import", "url("} {
		if strings.Contains(local, external) {
			t.Errorf("page loads an external resource (%s)", external)
		}
	}
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q, want hashes of the inline script", csp)
	}
	if r := c.do(t.Context(), t, "GET", "/nothing", nil); r.status != 404 {
		t.Errorf("GET /nothing = %d, want 404", r.status)
	}
}

func TestURL(t *testing.T) {
	tests := []struct {
		name   string
		listen string
		token  string
		want   string // with the port replaced by PORT
	}{
		{"loopback", "127.0.0.1:0", "", "http://127.0.0.1:PORT/"},
		{"token", "127.0.0.1:0", "a b&c", "http://127.0.0.1:PORT/?token=a+b%26c"},
		{"localhost", "localhost:0", "", "http://127.0.0.1:PORT/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Options{Listen: tc.listen, Token: tc.token})
			if a.URL() != "" || a.Addr() != "" {
				t.Errorf("URL, Addr before Run = %q, %q, want empty", a.URL(), a.Addr())
			}
			serve(t, a, nil)
			port := a.Addr()[strings.LastIndex(a.Addr(), ":")+1:]
			if got, want := a.URL(), strings.Replace(tc.want, "PORT", port, 1); got != want {
				t.Errorf("URL() = %q, want %q", got, want)
			}
		})
	}
}

// logBuffer collects log records for checks.
type logBuffer struct {
	mu   sync.Mutex
	text strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text.String()
}

// Beyond loopback, anyone who can reach the port could talk to the agent:
// without a token Run refuses to serve at all.
func TestRunRefusesBeyondLoopbackWithoutToken(t *testing.T) {
	tests := []struct {
		name    string
		listen  string
		token   string
		users   map[string]string
		refused bool
	}{
		{"loopback", "127.0.0.1:0", "", nil, false},
		{"all interfaces without token", "0.0.0.0:0", "", nil, true},
		{"all interfaces with token", "0.0.0.0:0", "t0ken-value", nil, false},
		{"all interfaces with named tokens", "0.0.0.0:0", "", map[string]string{"ann": "t0ken-value"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			a := New(Options{Listen: tc.listen, Token: tc.token, Users: tc.users, Logger: newTextLogger(&logs)})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
			select {
			case <-a.Ready():
				if tc.refused {
					t.Fatalf("Run listens on %s without a token", a.Addr())
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Run = %v", err)
				}
			case err := <-done:
				if !tc.refused || err == nil || !strings.Contains(err.Error(), "no access token is set (Options.Token or Options.Users)") {
					t.Fatalf("Run = %v, want it to serve: %v", err, !tc.refused)
				}
				if a.Check() == nil {
					t.Errorf("Check = nil after a refusal, want not listening")
				}
			}
			if strings.Contains(logs.String(), "t0ken-value") {
				t.Errorf("logs contain the token:\n%s", logs.String())
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	if err := a.Run(t.Context(), func(context.Context, channels.Inbound) {}); err == nil {
		t.Errorf("second Run = nil, want an error")
	}
	busy := New(Options{Listen: a.Addr()})
	if err := busy.Run(t.Context(), func(context.Context, channels.Inbound) {}); err == nil || !strings.Contains(err.Error(), "web: listen") {
		t.Errorf("Run on a used port = %v, want a listen error", err)
	}
}

// Options.Listener is served as given (the program binds it first) and
// closed when Run ends.
func TestRunOnAGivenListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := New(Options{Listen: "127.0.0.1:1", Listener: ln})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	<-a.Ready()
	if got, want := a.Addr(), ln.Addr().String(); got != want {
		t.Errorf("Addr = %s, want the listener's %s", got, want)
	}
	resp, err := http.Get(a.URL())
	if err != nil {
		t.Fatalf("GET %s: %v", a.URL(), err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if again, err := net.Listen("tcp", ln.Addr().String()); err != nil {
		t.Errorf("the listener is still open after Run: %v", err)
	} else {
		again.Close()
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	<-a.Ready()
	c := newClient(t, a)
	id := c.newThread(t.Context(), t)
	s := c.openStream(t, "/api/threads/"+id+"/events")
	s.next(t, "typing")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(testWait):
		t.Fatal("Run did not return with a stream open")
	}
	s.ended(t)
}

func TestOutboundErrors(t *testing.T) {
	a := New(Options{})
	ctx := t.Context()
	th := ref(a.st.mustCreate("").ID)
	done, cancel := context.WithCancel(ctx)
	cancel()
	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		gone bool
	}{
		{"post other platform", second(a.Post(ctx, channels.ThreadRef{Platform: "slack", Channel: "local", Thread: th.Thread}, channels.Message{Text: "x"})), false},
		{"post unknown thread", second(a.Post(ctx, ref("nope"), channels.Message{Text: "x"})), false},
		{"post empty", second(a.Post(ctx, th, channels.Message{Text: ""})), false},
		{"post bad UTF-8", second(a.Post(ctx, th, channels.Message{Text: "\xff"})), false},
		{"post ended context", second(a.Post(done, th, channels.Message{Text: "x"})), false},
		{"edit unknown", a.Edit(ctx, channels.Handle{Thread: th, ID: "nope"}, channels.Message{Text: "x"}), true},
		{"edit unknown thread", a.Edit(ctx, channels.Handle{Thread: ref("nope"), ID: h.ID}, channels.Message{Text: "x"}), true},
		{"edit empty", a.Edit(ctx, h, channels.Message{Text: ""}), false},
		{"typing unknown thread", a.Typing(ctx, ref("nope")), false},
		{"prompt no options", second(a.Prompt(ctx, th, channels.Choice{Text: "q"})), false},
		{"prompt duplicate option", second(a.Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{ID: "a"}, {ID: "a"}}})), false},
		{"prompt empty option id", second(a.Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{Label: "A"}}})), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("got nil, want an error")
			}
			if got := errors.Is(tc.err, channels.ErrMessageGone); got != tc.gone {
				t.Errorf("errors.Is(%v, ErrMessageGone) = %v, want %v", tc.err, got, tc.gone)
			}
			if !strings.HasPrefix(tc.err.Error(), "web: ") {
				t.Errorf("error %q lacks the web: prefix", tc.err)
			}
		})
	}
	// A user's message is not the gateway's to edit.
	uid, _ := a.st.addMessage(th.Thread, message{Role: roleUser, Author: "ann", Kind: "text", Text: "hi"})
	if err := a.Edit(ctx, channels.Handle{Thread: th, ID: channels.MessageID(uid.ID)}, channels.Message{Text: "x"}); !errors.Is(err, channels.ErrMessageGone) {
		t.Errorf("Edit of a person's message = %v, want ErrMessageGone", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestConcurrentUse(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	var mu sync.Mutex
	var got int
	in := serve(t, a, func(context.Context, channels.Inbound) {
		mu.Lock()
		got++
		mu.Unlock()
	})
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	th := ref(id)
	s := c.openStream(t, "/api/threads/"+id+"/events")

	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				body := map[string]string{"author": fmt.Sprintf("w%d", w), "text": fmt.Sprintf("message %d", i)}
				r, err := c.try(ctx, "POST", "/api/threads/"+id+"/messages", body, nil)
				if err == nil {
					err = r.want(http.StatusAccepted)
				}
				if err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			for i := range each {
				h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "x"})
				if err == nil {
					err = a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("edit %d", i)})
				}
				if err == nil {
					err = a.Typing(ctx, th)
				}
				if err != nil {
					errs <- err
				}
				if _, err := c.messages(ctx, id); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for range writers * each {
		in.next(t)
	}
	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) != 2*writers*each {
		t.Errorf("messages = %d, want %d", len(b.Messages), 2*writers*each)
	}
	// The stream saw every message (created or edited) in the end.
	seen := map[string]message{}
	for len(seen) < len(b.Messages) {
		m := s.nextMessage(t)
		seen[m.ID] = m
	}
}

// Who someone is comes from their token: named tokens are people, the
// single token is its owner, and what a request's body says about its
// author never makes it someone else.
func TestIdentityFromToken(t *testing.T) {
	const annTok, bobTok, ownerTok = "ann-token", "bob-token", "owner-token"
	a := New(Options{Listen: "127.0.0.1:0", Token: ownerTok, Users: map[string]string{"ann": annTok, "bob": bobTok}})
	a.replyWait = time.Millisecond
	in := serve(t, a, nil)
	c := newClient(t, a)
	c.token = ""
	ctx := t.Context()
	c.token = annTok
	id := c.newThread(ctx, t)
	c.token = ""
	prompt, err := a.Prompt(ctx, ref(id), channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := "/api/threads/" + id + "/messages"
	answer := "/api/threads/" + id + "/prompts/" + string(prompt.ID) + "/answer"

	t.Run("me", func(t *testing.T) {
		// The gateway's commands (channels.Commands), for the palette.
		var cmds []commandView
		for _, c := range channels.Commands() {
			cmds = append(cmds, commandView{Name: c.Name, Description: c.Description})
			if c.Arg != nil {
				cmds[len(cmds)-1].Arg = c.Arg.Name
			}
		}
		if !slices.Contains(cmds, commandView{Name: "stop", Description: "Stop the running turn"}) {
			t.Errorf("commands = %+v, want stop among them", cmds)
		}
		for tok, want := range map[string]meBody{
			annTok:   {ID: "web:ann", Name: "ann", Fixed: true, Agents: []string{}, Commands: cmds},
			bobTok:   {ID: "web:bob", Name: "bob", Fixed: true, Agents: []string{}, Commands: cmds},
			ownerTok: {ID: "web:owner", Name: "owner", Agents: []string{}, Commands: cmds},
		} {
			r, err := c.try(ctx, "GET", "/api/me", nil, bearer(tok))
			if err != nil {
				t.Fatal(err)
			}
			var got meBody
			r.decode(t, &got)
			if r.status != 200 || !reflect.DeepEqual(got, want) {
				t.Errorf("GET /api/me with %s = %d %+v, want %+v", tok, r.status, got, want)
			}
		}
		if r, _ := c.try(ctx, "GET", "/api/me", nil, bearer("ann-tokeN")); r.status != 401 {
			t.Errorf("GET /api/me with a wrong token = %d, want 401", r.status)
		}
	})

	accepted := []struct {
		name  string
		token string
		path  string
		body  map[string]string
		want  channels.Author
	}{
		{"named token", bobTok, msgs, map[string]string{"text": "hi"}, channels.Author{ID: "web:bob", Name: "bob"}},
		{"named token with its own name and id", bobTok, msgs, map[string]string{"author": "bob", "authorId": "web:bob", "text": "hi"}, channels.Author{ID: "web:bob", Name: "bob"}},
		{"owner token with a label", ownerTok, msgs, map[string]string{"author": "Boss", "text": "hi"}, channels.Author{ID: "web:owner", Name: "Boss"}},
		{"token in the query", "", msgs + "?token=" + annTok, map[string]string{"text": "hi"}, channels.Author{ID: "web:ann", Name: "ann"}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			var h http.Header
			if tc.token != "" {
				h = bearer(tc.token)
			}
			r, err := c.try(ctx, "POST", tc.path, tc.body, h)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.want(http.StatusAccepted); err != nil {
				t.Fatal(err)
			}
			if ev := in.next(t); !cmp.Equal(ev.Author, tc.want) {
				t.Errorf("Inbound.Author = %+v, want %+v", ev.Author, tc.want)
			}
		})
	}

	// bob cannot act as ann, nor anyone as the approver web:boss: not
	// for a message, a stop, or an answer to a prompt.
	forged := []struct {
		name, token, path string
		body              map[string]string
		errText           string
	}{
		{"message as another id", bobTok, msgs, map[string]string{"authorId": "web:ann", "text": "hi"},
			`your token is web:bob's; "authorId" "web:ann" names someone else (who you are comes from the token, not the request)`},
		{"message under another name", bobTok, msgs, map[string]string{"author": "ann", "text": "hi"},
			`your token is bob's; "author" "ann" names someone else (who you are comes from the token, not the request)`},
		{"stop as another id", bobTok, "/api/threads/" + id + "/stop", map[string]string{"authorId": "web:ann"},
			`your token is web:bob's; "authorId" "web:ann" names someone else (who you are comes from the token, not the request)`},
		{"answer as the approver", bobTok, answer, map[string]string{"author": "boss", "authorId": "web:boss", "optionId": "allow"},
			`your token is web:bob's; "authorId" "web:boss" names someone else (who you are comes from the token, not the request)`},
		{"owner answers as ann", ownerTok, answer, map[string]string{"authorId": "web:ann", "optionId": "allow"},
			`your token is web:owner's; "authorId" "web:ann" names someone else (who you are comes from the token, not the request)`},
	}
	for _, tc := range forged {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.try(ctx, "POST", tc.path, tc.body, bearer(tc.token))
			if err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusForbidden || r.errorText() != tc.errText {
				t.Errorf("POST %s = %d %s, want 403 %q", tc.path, r.status, r.body, tc.errText)
			}
			in.empty(t)
		})
	}
}

// TestFileNamesShowFormatCharacters: a file name with a right-to-left
// override or a zero-width space, posted through the HTTP API, is shown
// in the thread and given to the gateway with them written visibly; so is
// the name of a file the gateway puts into the thread.
func TestFileNamesShowFormatCharacters(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]any{
		"author": "ann",
		"files":  []map[string]string{{"name": "invoice\u202efdp.exe", "type": "text/plain", "data": base64.StdEncoding.EncodeToString([]byte("x"))}},
	})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	ev := in.next(t)
	if len(ev.Files) != 1 || ev.Files[0].Name != "invoice[U+202E]fdp.exe" {
		t.Errorf("the gateway got %+v, want the name with [U+202E]", ev.Files)
	}
	if _, err := a.Upload(ctx, ref(id), channels.Upload{Name: "a\u200bb.txt", Data: []byte("y")}); err != nil {
		t.Fatal(err)
	}
	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, m := range b.Messages {
		shown = append(shown, m.Text)
		for _, f := range m.Files {
			shown = append(shown, f.Name)
		}
	}
	all := strings.Join(shown, "\n")
	for _, want := range []string{"📎 invoice[U+202E]fdp.exe", "a[U+200B]b.txt"} {
		if !strings.Contains(all, want) {
			t.Errorf("the thread shows %q, want %q", all, want)
		}
	}
	if strings.ContainsAny(all, "\u202e\u200b") {
		t.Errorf("the thread shows a format character: %q", all)
	}
}
