package slack

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// plainWords have no Markdown that mrkdwn would rewrite, so that the
// text of edits mode can be compared as well.
var plainWords = []string{"the", "agent", "runs", "a", "tool", "and", "reads", "files", "café", "你好", "👩‍💻", "ok.", "done!", "why?", "x"}

func genPlain(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(plainWords[r.IntN(len(plainWords))])
		switch r.IntN(15) {
		case 0:
			b.WriteString("\n\n")
		case 1:
			b.WriteString("\n")
		default:
			b.WriteString(" ")
		}
	}
	b.WriteString("end")
	return b.String()
}

// laneRun drives a dispatch lane over the adapter with a turn of
// segments of text split by tool calls, on a virtual clock, and returns
// the agent's text and the tool call ids.
func laneRun(t *testing.T, a channels.Adapter, th channels.ThreadRef, r *rand.Rand) (want string, tools []string) {
	t.Helper()
	settings := projector.DefaultSettings()
	settings.MaxTurnChars = 1 << 20
	lane := dispatch.NewLane(dispatch.Options{Adapter: a, Thread: th, Stream: settings, Typing: typing.DefaultConfig()})
	proj := projector.New(settings)
	now := time.Unix(0, 0)
	var next time.Time
	step := func() { next = lane.Step(t.Context(), now) }
	advance := func(d time.Duration) {
		target := now.Add(d)
		for !next.IsZero() && !next.After(target) {
			now = next
			step()
		}
		now = target
		step()
	}
	var outs []projector.Output
	outs = proj.BeginTurn(outs[:0])
	lane.BeginTurn(now)
	lane.Push(now, outs...)
	var b strings.Builder
	segments := 1 + r.IntN(4)
	for s := range segments {
		text := genPlain(r, 5+r.IntN(150))
		if s > 0 {
			text = "\n\n" + text
		}
		for text != "" {
			n := min(len(text), 1+r.IntN(30))
			for n < len(text) && (text[n]&0xC0) == 0x80 {
				n++
			}
			outs = proj.Apply(&projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", Text: text[:n]}, outs[:0])
			b.WriteString(text[:n])
			text = text[n:]
			lane.Push(now, outs...)
			advance(time.Duration(r.IntN(700)) * time.Millisecond)
		}
		if s < segments-1 {
			id := projector.ToolCallID(fmt.Sprintf("call_%d", len(tools)))
			tools = append(tools, string(id))
			outs = proj.Apply(&projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: id, Title: "step " + string(id), HasTitle: true, Kind: "execute", Status: projector.StatusInProgress}}, outs[:0])
			lane.Push(now, outs...)
			advance(time.Duration(r.IntN(3000)) * time.Millisecond)
			outs = proj.Apply(&projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: id, Status: projector.StatusCompleted}}, outs[:0])
			lane.Push(now, outs...)
			advance(time.Duration(r.IntN(3000)) * time.Millisecond)
		}
	}
	outs = proj.EndTurn("end_turn", "", outs[:0])
	lane.Push(now, outs...)
	step()
	for i := 0; !next.IsZero(); i++ {
		if i > 100000 {
			t.Fatal("lane never drained")
		}
		now = next
		step()
	}
	if !lane.Idle() {
		t.Fatal("lane not idle after draining")
	}
	return b.String(), tools
}

// delivered returns the text people see in the thread (the messages
// that are not tool lines, in order) and each tool's last task card or
// line.
func delivered(f *fakeSlack, ch, thread string) (text string, tasks map[string]string) {
	tasks = map[string]string{}
	var b strings.Builder
	for _, m := range f.thread(ch, thread) {
		if m.TS == thread {
			continue
		}
		if m.Stream != nil {
			for _, id := range m.Stream.taskOrder {
				tk := m.Stream.tasks[id]
				tasks[id] = tk.Title + " · " + tk.Status
			}
		}
		if strings.Contains(m.Text, "step call_") {
			id := m.Text[strings.Index(m.Text, "call_"):]
			id, _, _ = strings.Cut(id, " ")
			tasks[strings.Trim(id, "`*_")] = m.Text
			continue
		}
		b.WriteString(m.Text)
	}
	return b.String(), tasks
}

// TestStreamNothingLostNothingDoubled: through the lane, in native mode
// with streams Slack closes at random points or at a size limit, and in
// edits mode, the delivered text equals the agent's text and every tool
// ends shown as done.
func TestStreamNothingLostNothingDoubled(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	expired, appends := 0, 0
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 16))
		mode := []Streaming{StreamingNative, StreamingNative, StreamingEdits}[seed%3]
		o := fakeOptions{streams: true, stream: fakeStreams{expire: rand.New(rand.NewPCG(seed, 7)), expireP: r.Float64() * 0.3}}
		if r.IntN(2) == 0 {
			o.stream.limit = 100 + r.IntN(600)
		}
		name := fmt.Sprintf("seed=%d mode=%s expire=%.2f limit=%d", seed, mode, o.stream.expireP, o.stream.limit)
		f := newFake(t, o)
		a := f.adapter(t, Options{Streaming: mode})
		th := ref(fakeChannel, fakeThread)
		want, tools := laneRun(t, a, th, r)
		a.FinishStreams(t.Context(), th)

		got, tasks := delivered(f, fakeChannel, fakeThread)
		if got != want {
			t.Fatalf("%s:\ndelivered %q\n     want %q", name, got, want)
		}
		for _, id := range tools {
			shown := tasks[id]
			if !strings.Contains(shown, "complete") && !strings.Contains(shown, "done") {
				t.Fatalf("%s: tool %s ends as %q, want done", name, id, shown)
			}
		}
		starts := len(f.callsTo("chat.startStream"))
		appends += len(f.callsTo("chat.appendStream"))
		switch {
		case mode == StreamingNative && starts == 0:
			t.Fatalf("%s: native mode never streamed", name)
		case mode == StreamingEdits && starts != 0:
			t.Fatalf("%s: edits mode streamed %d times", name, starts)
		}
		for _, m := range f.thread(fakeChannel, fakeThread) {
			if m.Stream != nil && m.Stream.expired {
				expired++
			}
			if m.Stream != nil && m.Stream.streaming {
				t.Fatalf("%s: stream %s left open after FinishStreams", name, m.TS)
			}
		}
	}
	if expired == 0 || appends == 0 {
		t.Fatalf("%d streams expired in %d appends: the test shows nothing", expired, appends)
	}
	t.Logf("%d streams expired in %d appends", expired, appends)
}

// TestNativeStreamShape: a mention's thread streams with the person and
// workspace as recipient, text as Markdown (not mrkdwn), tool calls as
// task_update chunks keyed by call id whose status follows the tool line,
// and the plan as plan_update; a classic message ends the stream.
func TestNativeStreamShape(t *testing.T) {
	f := newFake(t, fakeOptions{streams: true})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	s := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "hi", mention: true})
	in := r.next(ctx)
	th := in.Thread

	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "**bold** and `code`"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "**bold** and `code` more"}); err != nil {
		t.Fatal(err)
	}
	tool, err := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🔧 Run `ls` · running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🔧 Run `ls` · done\nthree files"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindPlan, Key: "plan", Text: "1. read\n2. write"}); err != nil {
		t.Fatal(err)
	}
	st, ok := f.streamOf(fakeChannel, string(h.ID))
	if !ok {
		t.Fatalf("message %s is not a stream", h.ID)
	}
	m, _ := f.message(fakeChannel, string(h.ID))
	if m.Text != "**bold** and `code` more" || !m.Markdown {
		t.Errorf("streamed text = %q (markdown %v), want the agent's Markdown", m.Text, m.Markdown)
	}
	if st.recipient != [2]string{"U0ANN", f.team} {
		t.Errorf("recipient = %v, want Ann in %s", st.recipient, f.team)
	}
	want := fakeTask{Title: "🔧 Run `ls`", Status: "complete", Details: "three files"}
	if got := st.tasks["call_1"]; got != want || len(st.taskOrder) != 1 {
		t.Errorf("tasks = %v, want one task %+v", st.tasks, want)
	}
	if st.plan != "1. read\n2. write" {
		t.Errorf("plan = %q", st.plan)
	}
	if !st.streaming {
		t.Error("the stream stopped before the turn's last message")
	}
	if m.ThreadTS != s.ts {
		t.Errorf("stream in thread %q, want %q", m.ThreadTS, s.ts)
	}
	if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindNotice, Text: "a notice"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.streamOf(fakeChannel, string(h.ID)); st.streaming {
		t.Error("a classic post left the stream open above it")
	}
	if n := len(f.callsTo("chat.postMessage")); n != 1 {
		t.Errorf("chat.postMessage calls = %d, want 1 (the notice)", n)
	}
}

// TestStreamingRefusedFallsBack: a workspace whose chat.startStream
// answers unknown_method gets posts and edits from the first message on,
// with one refused call in all.
func TestStreamingRefusedFallsBack(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	th := ref(fakeChannel, fakeThread)
	for i := range 3 {
		h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: fmt.Sprint("**part** ", i)})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := f.message(fakeChannel, string(h.ID))
		if m.Text != fmt.Sprint("*part* ", i) {
			t.Errorf("message %d = %q, want mrkdwn", i, m.Text)
		}
	}
	if n := len(f.callsTo("chat.startStream")); n != 1 {
		t.Errorf("chat.startStream calls = %d, want 1", n)
	}
}
