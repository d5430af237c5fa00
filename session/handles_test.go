package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// openWatch tells the test each write of a thread's open messages.
type openWatch struct {
	store.Backend
	sets chan []store.OpenMessage
}

func (w openWatch) SetOpenMessages(ctx context.Context, t channels.ThreadRef, ms []store.OpenMessage) error {
	err := w.Backend.SetOpenMessages(ctx, t, ms)
	if err == nil {
		send(w.sets, ms)
	}
	return err
}

func watchOpens(o *envOptions) chan []store.OpenMessage {
	sets := make(chan []store.OpenMessage, 100)
	o.store = func(b store.Backend) store.Backend { return openWatch{Backend: b, sets: sets} }
	return sets
}

func (e *env) nextOpens(sets chan []store.OpenMessage) []store.OpenMessage {
	e.t.Helper()
	select {
	case ms := <-sets:
		return ms
	case <-e.ctx().Done():
		e.t.Fatal("no write of the open messages")
		return nil
	}
}

// A running tool's message is recorded, with its cut-off line, while the
// tool runs; its terminal line takes it off.
func TestOpenMessagesFollowTheTurn(t *testing.T) {
	o := envOptions{rec: channeltest.Options{Edit: true}}
	sets := watchOpens(&o)
	e := newEnv(t, o)
	th := e.rec.Thread("tool")
	e.say(th, ann, "slow-tool 1")
	ms := e.nextOpens(sets)
	tool := e.waitOp(th, "the running tool's line", func(op channeltest.Op) bool { return op.Kind == channels.KindTool && op.Op == "send" })
	if len(ms) != 1 || ms[0].ID != tool.Msg || len(ms[0].Lines) != 1 || ms[0].Lines[0].Text != strings.TrimSuffix(tool.Text, "running")+"cancelled" {
		t.Fatalf("open messages = %+v, want the tool's message %s (%q) with its cut-off line", ms, tool.Msg, tool.Text)
	}
	if ms := e.nextOpens(sets); len(ms) != 0 {
		t.Fatalf("open messages after the tool ended = %+v, want none", ms)
	}
	e.waitEnd(th)
	if ms, err := e.st.OpenMessages(e.ctx(), th); err != nil || len(ms) != 0 {
		t.Errorf("open messages in the store after the turn: %+v, %v", ms, err)
	}
}

// A deleted thread's open messages go with it.
func TestOpenMessagesGoWithTheThread(t *testing.T) {
	o := envOptions{rec: channeltest.Options{Edit: true, Typing: true}}
	sets := watchOpens(&o)
	e := newEnv(t, o)
	th := e.rec.Thread("deleted")
	e.say(th, ann, "slow-tool 3600")
	if ms := e.nextOpens(sets); len(ms) != 1 {
		t.Fatalf("open messages = %+v, want the tool's", ms)
	}
	e.closeThread(th)
	if ms, err := e.st.OpenMessages(e.ctx(), th); err != nil || len(ms) != 0 {
		t.Errorf("open messages of the deleted thread: %+v, %v; want none", ms, err)
	}
}

// A thread taken over from a dead worker: each message its cut-off turn
// left open is edited in place to its cut-off text before the thread is
// told; one that cannot be edited is tried once and left; the records
// go.
func TestAdoptEditsTheOpenMessagesFirst(t *testing.T) {
	// Shared, as a worker: its start leaves the running mark alone.
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, shared: true})
	th := e.rec.Thread("taken")
	h, err := e.rec.Adapter().Post(e.ctx(), th, channels.Message{Kind: channels.KindTool, Key: "c1", Text: "🛠️ make · running"})
	if err != nil {
		t.Fatal(err)
	}
	cut := "🛠️ make · cancelled"
	if err := e.st.MarkTurnRunning(e.ctx(), store.RunningTurn{Thread: th, SessionID: "s", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetOpenMessages(e.ctx(), th, []store.OpenMessage{
		{Key: "tool:gone", ID: "deleted-by-someone", Lines: []store.OpenLine{{Key: "gone", Text: "📖 a.go · cancelled"}}},
		{Key: "tool:c1", ID: h.ID, Lines: []store.OpenLine{{Key: "c1", Text: cut}}},
	}); err != nil {
		t.Fatal(err)
	}
	e.r.Adopt(e.ctx(), th)
	// The notice goes through the thread's lane.
	told := func(ops []channeltest.Op) bool {
		return slices.ContainsFunc(ops, func(op channeltest.Op) bool {
			return op.Kind == channels.KindNotice && strings.Contains(op.Text, sysmsg.WorkerLost{}.Body())
		})
	}
	if err := e.rec.WaitFor(e.ctx(), th, told); err != nil {
		t.Fatalf("waiting for the notice: %v", err)
	}

	if m, _ := e.rec.Message(h.ID); m.Text != cut || m.Edits != 1 {
		t.Errorf("the tool's message after Adopt: %q (%d edits), want %q edited in place", m.Text, m.Edits, cut)
	}
	var order []string
	for _, op := range e.rec.OpsIn(th) {
		switch {
		case op.Op == "edit":
			order = append(order, "edit "+string(op.Msg))
		case op.Kind == channels.KindNotice && strings.Contains(op.Text, sysmsg.WorkerLost{}.Body()):
			order = append(order, "told")
		}
	}
	if want := []string{"edit " + string(h.ID), "told"}; !slices.Equal(order, want) {
		t.Errorf("after Adopt: %q, want %q", order, want)
	}
	tries := 0
	for _, op := range e.rec.Attempts() {
		if op.Msg == "deleted-by-someone" {
			tries++
		}
	}
	if tries != 1 {
		t.Errorf("the message that is gone was tried %d times, want once", tries)
	}
	if ms, err := e.st.OpenMessages(e.ctx(), th); err != nil || len(ms) != 0 {
		t.Errorf("open messages after Adopt: %+v, %v; want none", ms, err)
	}
}

// cardAdapter shows tool calls as progress cards: a card is a tool
// message whose text is its rows, "key=text" joined by " / ".
type cardAdapter struct {
	channels.Adapter
	channels.Editor
}

func (cardAdapter) Cards() bool { return true }

func (c cardAdapter) Card(ctx context.Context, t channels.ThreadRef, h channels.Handle, rows []channels.Message) (channels.Handle, error) {
	var texts []string
	for _, r := range rows {
		texts = append(texts, r.Key+"="+r.Text)
	}
	m := channels.Message{Kind: channels.KindTool, Text: strings.Join(texts, " / ")}
	if !h.Known() {
		return c.Adapter.Post(ctx, t, m)
	}
	return h, c.Editor.Edit(ctx, h, m)
}

// A progress card a cut-off turn left open is redrawn in place with its
// rows' cut-off text; where the adapter cannot edit, nothing is touched
// and the records still go.
func TestAdoptRedrawsOpenCards(t *testing.T) {
	for _, edits := range []bool{true, false} {
		rec := channeltest.New(channeltest.Options{Platform: "web", Edit: edits})
		o := envOptions{recorder: rec, rec: channeltest.Options{Platform: "web", Edit: edits}, shared: true}
		if edits {
			o.adapter = cardAdapter{Adapter: rec.Adapter(), Editor: rec.Adapter().(channels.Editor)}
		}
		e := newEnv(t, o)
		th := e.rec.Thread("carded")
		h, err := e.rec.Adapter().Post(e.ctx(), th, channels.Message{Kind: channels.KindTool, Text: "a=📖 a.go · done / b=🛠️ make · running"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.SetOpenMessages(e.ctx(), th, []store.OpenMessage{{Key: "card:1", ID: h.ID, Card: true, Lines: []store.OpenLine{
			{Key: "a", Text: "📖 a.go · done"}, {Key: "b", Text: "🛠️ make · cancelled"},
		}}}); err != nil {
			t.Fatal(err)
		}
		e.r.Adopt(e.ctx(), th)
		want, wantEdits := "a=📖 a.go · done / b=🛠️ make · cancelled", 1
		if !edits {
			want, wantEdits = "a=📖 a.go · done / b=🛠️ make · running", 0
		}
		if m, _ := e.rec.Message(h.ID); m.Text != want || m.Edits != wantEdits {
			t.Errorf("edits %v: the card after Adopt: %q (%d edits), want %q (%d)", edits, m.Text, m.Edits, want, wantEdits)
		}
		if ms, err := e.st.OpenMessages(e.ctx(), th); err != nil || len(ms) != 0 {
			t.Errorf("edits %v: open messages after Adopt: %+v, %v; want none", edits, ms, err)
		}
	}
}
