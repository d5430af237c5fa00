package slack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

// TestStatusWhileWaiting: the status line rotates loading messages while
// a turn runs, says "is waiting for your approval" while a prompt is
// open, goes back to working once the prompt is answered (edited), and
// is cleared at the end.
func TestStatusWhileWaiting(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	var ch channels.Adapter = a
	th := ref(fakeChannel, fakeThread)
	if err := ch.(channels.Typer).Typing(ctx, th); err != nil {
		t.Fatal(err)
	}
	p, err := ch.(channels.Prompter).Prompt(ctx, th, channels.Choice{Text: "Run `rm`?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Post(ctx, th, channels.Message{Kind: channels.KindNotice, Text: "still asking"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.(channels.Editor).Edit(ctx, p, channels.Message{Kind: channels.KindPermission, Text: "Run `rm`? allowed"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.(channels.TypingStopper).StopTyping(ctx, th); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.callsTo("assistant.threads.setStatus") {
		got = append(got, c.Form.Get("status")+" | "+c.Form.Get("loading_messages"))
	}
	working := "is working… | " + strings.Join(loadingMessages, ",")
	want := []string{
		working,
		"is waiting for your approval | ", // the prompt opened
		"is waiting for your approval | ", // after the notice, still open
		working,                           // answered
		" | ",                             // the turn ended
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("setStatus calls (-want +got):\n%s", diff)
	}
}

// TestStatusRefusedAtFirstUse: without a probe at start, the first real
// setStatus that Slack refuses for good turns the line off: later turns
// make no setStatus call, and posts are not followed by one.
func TestStatusRefusedAtFirstUse(t *testing.T) {
	f := newFake(t, fakeOptions{statusOff: true})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(f.callsTo("assistant.threads.setStatus")); n != 0 {
		t.Fatalf("Detect made %d setStatus calls, want none", n)
	}
	ty := channels.Typer(a)
	th := ref(fakeChannel, fakeThread)
	if err := ty.Typing(ctx, th); !channels.IsPermanent(err) {
		t.Errorf("first Typing = %v, want Slack's refusal", err)
	}
	for range 3 {
		if err := ty.Typing(ctx, th); err != nil {
			t.Errorf("Typing after the refusal = %v, want nil", err)
		}
		if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindNotice, Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.callsTo("assistant.threads.setStatus")); n != 1 {
		t.Errorf("setStatus calls = %d, want the one refused", n)
	}
	// Only real threads get a status line.
	if err := ty.Typing(ctx, ref(fakeChannel, "")); err != nil {
		t.Errorf("Typing at a channel's top = %v", err)
	}
}

// TestStopButton: a click on Slack's Stop button in a thread the app is in
// arrives as Inbound{Stop} from the person who clicked; the streams Slack
// stopped continue with chat.update; a Stop in a thread the app is not in
// is not delivered.
func TestStopButton(t *testing.T) {
	f := newFake(t, fakeOptions{streams: true})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	if err := f.stopButton(ctx, "U0ANN", fakeChannel, "1690000000.000009"); err != nil {
		t.Fatal(err)
	}
	s := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "go", mention: true})
	in := r.next(ctx)
	h, err := a.Post(ctx, in.Thread, channels.Message{Kind: channels.KindText, Text: "part"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.stopButton(ctx, "U0ANN", fakeChannel, s.ts); err != nil {
		t.Fatal(err)
	}
	stop := r.next(ctx)
	want := channels.Inbound{Thread: ref(fakeChannel, s.ts), Author: channels.Author{ID: "U0ANN", Name: "Ann"}, Stop: true, Space: f.team}
	if diff := cmp.Diff(want, stop); diff != "" {
		t.Errorf("stop inbound (-want +got):\n%s", diff)
	}
	// The stopped stream's message still takes the rest of the text.
	if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "part and the rest"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.message(fakeChannel, string(h.ID)); m.Text != "part and the rest" {
		t.Errorf("stopped stream's message = %q", m.Text)
	}
	if n := len(f.callsTo("chat.appendStream")); n != 0 {
		t.Errorf("%d appends to a stream Slack stopped, want 0 (it said so)", n)
	}
}

// TestSetTitle: the session title renames the thread's agent session.
func TestSetTitle(t *testing.T) {
	f := newFake(t, fakeOptions{streams: true})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	var ti channels.Titler = a
	if err := ti.SetTitle(ctx, ref(fakeChannel, fakeThread), "Fix the parser"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	got := f.titles[fakeChannel+"/"+fakeThread]
	f.mu.Unlock()
	if got != "Fix the parser" {
		t.Errorf("session title = %q", got)
	}
	if err := ti.SetTitle(ctx, ref("C0GONE", fakeThread), "x"); !channels.IsPermanent(err) {
		t.Errorf("SetTitle in an unknown channel = %v, want a permanent error", err)
	}
}

// TestEndToEndNative: through the session router and the demo agent, a
// workspace that streams gets the answer as one streamed Markdown message
// (no chat.postMessage), the tools as task cards, and Slack's Stop button
// stops a running turn exactly as the word does.
func TestEndToEndNative(t *testing.T) {
	g := newGateway(t, fakeOptions{streams: true})
	f := g.f
	s := g.say(ann, "", "slow 30", true)
	th := ref(fakeChannel, s.ts)
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("first turn ended %+v", end)
	}
	msgs := g.messages(th)
	if len(msgs) != 1 || msgs[0].Text != slowWords(30) || msgs[0].Stream == nil || !msgs[0].Markdown {
		t.Fatalf("thread after the first turn:\n%s\nwant one streamed message with the words", g.dump(th))
	}
	err := f.waitFor(g.ctx(), "the stream stopped at the turn's end", func() bool { return !f.msgs[th.Channel+"/"+msgs[0].TS].Stream.streaming })
	if err != nil {
		t.Error(err)
	}
	if len(f.callsTo("chat.appendStream")) == 0 || len(f.callsTo("chat.postMessage")) != 0 {
		t.Errorf("appendStream calls %d, postMessage calls %d; want the answer streamed", len(f.callsTo("chat.appendStream")), len(f.callsTo("chat.postMessage")))
	}
	if st := msgs[0].Stream; st.recipient != [2]string{ann, f.team} {
		t.Errorf("stream recipient = %v, want Ann in the workspace", st.recipient)
	}

	g.say(ann, s.ts, "tools", false)
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("tools turn ended %+v", end)
	}
	tasks := 0
	for _, m := range g.messages(th) {
		if m.Stream == nil {
			continue
		}
		for _, id := range m.Stream.taskOrder {
			tasks++
			if tk := m.Stream.tasks[id]; tk.Status != "complete" && tk.Status != "error" {
				t.Errorf("task %s = %+v, want it ended (complete or error)", id, tk)
			}
		}
	}
	if tasks == 0 {
		t.Errorf("no task cards after the tools turn:\n%s", g.dump(th))
	}

	since := g.mark(th)
	g.say(ann, s.ts, "slow 400", false)
	slow := g.waitMessage(th, since, "the quick brown")
	if err := f.stopButton(g.ctx(), ann, th.Channel, th.Thread); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("turn after Stop ended %+v, want cancelled", end)
	}
	g.waitMessage(th, since, "Stopped by Ann.")
	if m, _ := f.message(th.Channel, slow.TS); len(m.Text) > len(slowWords(200)) {
		t.Errorf("the stopped turn wrote %d characters; the stop came late", len(m.Text))
	}
}

// TestStatusAfterStreamStart: the status line is set again after a new
// streamed message (Slack clears it when the app replies), not after
// every chunk appended to the open stream.
func TestStatusAfterStreamStart(t *testing.T) {
	f := newFake(t, fakeOptions{streams: true})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	var ch channels.Adapter = a
	th := ref(fakeChannel, fakeThread)
	if err := ch.(channels.Typer).Typing(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if !f.statusShown(fakeChannel, fakeThread) {
		t.Error("status line gone after the stream started")
	}
	for i := range 3 {
		h, err := ch.Post(ctx, th, channels.Message{Kind: channels.KindTool, Key: "call_" + string(rune('a'+i)), Text: "🔧 x · running"})
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindTool, Key: "call_" + string(rune('a'+i)), Text: "🔧 x · done"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.callsTo("assistant.threads.setStatus")); n != 2 {
		t.Errorf("setStatus calls = %d, want 2 (Typing, and after the stream started)", n)
	}
}
