package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
