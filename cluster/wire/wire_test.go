package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/wire"
)

var th = channels.ThreadRef{Platform: "test", Channel: "c", Thread: "t1"}

func roundTrip[T any](t *testing.T, v T, decode func([]byte) (T, error)) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip changed the value:\n got %#v\nwant %#v\nwire %s", got, v, b)
	}
	return got
}

// Every field the session reads crosses, for each intent.
func TestInboundRoundTrip(t *testing.T) {
	when := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	author := channels.Author{ID: "u1", Name: "Ann", Roles: []string{"ops"}}
	events := map[string]channels.Inbound{
		"message": {Thread: th, Author: author, Text: "hello", ID: "m1", Agent: "demo", Space: "g1", Time: when,
			Files: []channels.File{{Name: "a.txt", ContentType: "text/plain", Size: 3, URL: "http://x/a", Text: "abc"}, {Name: "p.png", Data: []byte{1, 2}, Skipped: ""}}},
		"choice":        {Thread: th, Author: author, ID: "m2", Choice: &channels.ChoiceAnswer{Prompt: channels.Handle{Thread: th, ID: "p1"}, OptionID: "allow"}},
		"stop":          {Thread: th, Author: author, ID: "m3", Stop: true},
		"command":       {Thread: th, Author: author, ID: "m4", Text: "/model x", Command: &channels.Command{Name: "model", Args: "x"}},
		"form":          {Thread: th, Author: author, ID: "m5", Form: &channels.FormAnswer{Form: channels.Handle{Thread: th, ID: "f1"}, Action: channels.FormAccept, Values: map[string][]string{"n": {"3"}}}},
		"reaction":      {Thread: th, Author: author, ID: "m6", Reaction: &channels.Reaction{Message: "x1", Emoji: "🛑", Removed: true}},
		"closed":        {Thread: th, Author: author, ID: "m7", Closed: true},
		"own tool line": {Thread: th, Author: channels.Author{ID: "b1", Name: "gw", Bot: true, Self: true}, Text: "🛠️ ls", ID: "m9", Meta: true},
	}
	for name, in := range events {
		t.Run(name, func(t *testing.T) {
			w := roundTrip(t, wire.FromInbound(in, "edge1"), wire.DecodeInbound)
			if got := w.Inbound(); !reflect.DeepEqual(got, in) {
				t.Fatalf("got %#v, want %#v", got, in)
			}
			if w.Inbound().Intent() != in.Intent() {
				t.Fatal("intent changed")
			}
		})
	}
	// The functions do not travel; their presence does, with the edge.
	in := channels.Inbound{Thread: th, ID: "m8", Command: &channels.Command{Name: "model"},
		Suggest: func(context.Context, []channels.Option) error { return nil },
		Reply:   func(context.Context, string) error { return nil },
		Fetch:   func(context.Context) []channels.File { return nil }}
	w := roundTrip(t, wire.FromInbound(in, "edge1"), wire.DecodeInbound)
	if !w.Suggest || !w.Reply || !w.Fetch || w.Edge != "edge1" {
		t.Fatalf("callbacks lost: %+v", w)
	}
}

func TestOpRoundTrip(t *testing.T) {
	h := channels.Handle{Thread: th, ID: "x9"}
	lo := 1.5
	ops := []wire.Op{
		{Key: "k1", Op: wire.OpPost, Thread: th, Message: &channels.Message{Kind: channels.KindTool, Text: "`ls`", Key: "call1"}},
		{Key: "k2", Op: wire.OpEdit, Handle: h, Message: &channels.Message{Kind: channels.KindText, Text: "done"}},
		{Key: "k3", Op: wire.OpPrompt, Thread: th, Choice: &channels.Choice{Text: "Run?", Options: []channels.Option{{ID: "a", Label: "Allow", Style: "primary"}}, Attachment: &channels.Attachment{Name: "p.txt", Text: "all"}}},
		{Key: "k4", Op: wire.OpUpload, Thread: th, Upload: &channels.Upload{Name: "r.pdf", ContentType: "application/pdf", Data: []byte("%PDF"), Caption: "report"}},
		{Key: "k5", Op: wire.OpCard, Thread: th, Handle: h, Rows: []channels.Message{{Kind: channels.KindTool, Text: "a", Key: "c1"}}},
		{Key: "k6", Op: wire.OpForm, Thread: th, Form: &channels.Form{Title: "Q", Text: "?", Fields: []channels.Field{{ID: "n", Label: "N", Kind: channels.FieldNumber, Min: &lo, Required: true, Options: []channels.Option{{ID: "o"}}}}}},
		{Key: "k7", Op: wire.OpReact, Handle: h, Text: "👀"},
		{Key: "k8", Op: wire.OpSetCommands, Cmds: channels.Commands()},
		{Key: "k9", Op: wire.OpMessagesAfter, Thread: th, After: "m1", Limit: 50},
		{Key: "k10", Op: wire.OpToolDetail, Thread: th, Text: "c1", Detail: &channels.ToolDetail{Input: "{}", Diffs: []channels.Diff{{Path: "a", Old: "x", New: "y"}}, Locations: []string{"a:1"}}},
		{Key: "k11", Op: wire.OpShowSession, Thread: th, Session: &channels.SessionInfo{Agent: "demo", Cost: 0.5, Settings: []channels.Setting{{ID: "m", Values: []channels.Option{{ID: "v"}}}}}},
		{Key: "k12", Op: wire.OpSuggest, Event: "m8", Options: []channels.Option{{ID: "a", Label: "A"}}},
	}
	for _, o := range ops {
		roundTrip(t, o, wire.DecodeOp)
	}
}

func TestResultAndErrors(t *testing.T) {
	roundTrip(t, wire.Result{Handle: channels.Handle{Thread: th, ID: "x"}}, wire.DecodeResult)
	roundTrip(t, wire.Result{Page: &wire.Page{Messages: []wire.Inbound{wire.FromInbound(channels.Inbound{Thread: th, ID: "m1", Text: "hi"}, "")}, Last: "m1", More: true}}, wire.DecodeResult)

	errs := []error{
		&channels.RateLimitError{RetryAfter: 1500 * time.Millisecond, Scope: "post"},
		channels.Permanent(errors.New("unknown channel")),
		errors.Join(errors.New("edit"), channels.ErrMessageGone),
		errors.New("connection refused"),
	}
	for _, e := range errs {
		r := roundTrip(t, wire.Result{Err: wire.ErrorOf(e)}, wire.DecodeResult)
		got := r.Err.Err()
		var rl, rl2 *channels.RateLimitError
		if errors.As(e, &rl) != errors.As(got, &rl2) || (rl != nil && *rl != *rl2) {
			t.Errorf("%v came back as %v", e, got)
		}
		if channels.IsPermanent(e) != channels.IsPermanent(got) || errors.Is(e, channels.ErrMessageGone) != errors.Is(got, channels.ErrMessageGone) {
			t.Errorf("%v came back as %v", e, got)
		}
	}
	if wire.ErrorOf(nil) != nil || (*wire.Error)(nil).Err() != nil {
		t.Error("nil is not nil")
	}
}

func TestDecodersRefuse(t *testing.T) {
	for _, b := range []string{`{}`, `{"thread":{"Platform":"p","Channel":"c","Thread":"t"}}`, `{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","reply":true}`, `[`} {
		if _, err := wire.DecodeInbound([]byte(b)); err == nil {
			t.Errorf("DecodeInbound(%s) took it", b)
		}
	}
	for _, b := range []string{`{"op":"post"}`, `{"key":"k","op":"explode"}`} {
		if _, err := wire.DecodeOp([]byte(b)); err == nil {
			t.Errorf("DecodeOp(%s) took it", b)
		}
	}
	if _, err := wire.DecodeResult([]byte(`{"err":{"message":"x"}}`)); err == nil {
		t.Error("an error of no kind was taken")
	}
	if _, err := wire.DecodeCaps([]byte(`{"caps":["edit"]}`)); err == nil {
		t.Error("caps without a platform were taken")
	}
}

// A take-over event crosses with its id made of the thread, the mark's
// time, its attempts and the scan's round, and carries nothing else: one
// with a message or an intent is refused.
func TestTakeOverEvent(t *testing.T) {
	ev := wire.TakeOverEvent(th, time.UnixMilli(1764115200123), 1, time.UnixMilli(1764115215000))
	if ev.ID != "takeover:test/c/t1:1764115200123:1:1764115215000" {
		t.Fatalf("id %q", ev.ID)
	}
	roundTrip(t, ev, wire.DecodeInbound)
	for name, bad := range map[string]string{
		"text":     `{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","takeover":true,"text":"hi"}`,
		"stop":     `{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","takeover":true,"stop":true}`,
		"missed":   `{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","takeover":true,"missed":{"N":1}}`,
		"callback": `{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","takeover":true,"reply":true,"edge":"e"}`,
	} {
		if _, err := wire.DecodeInbound([]byte(bad)); err == nil {
			t.Errorf("%s: a take-over event with it was taken", name)
		}
	}
}

// An announcement crosses as the capabilities it was made of, and one an
// edge of the release before wrote (the same names, cards only in its
// own field, no check) reads as it meant.
func TestCapsCross(t *testing.T) {
	c := channels.Caps{Edit: true, Typing: true, StopTyping: true, Card: true, Cards: true, TurnEnd: true, Check: true}
	ann := roundTrip(t, wire.FromCaps("p", c, channels.Limits{MaxMessageChars: 2000}), wire.DecodeCaps)
	if got := ann.Caps(); got != c {
		t.Errorf("Caps() = %+v, want %+v", got, c)
	}
	b, _ := json.Marshal(ann)
	if want := `{"platform":"p","caps":["edit","typing","stop_typing","card","cards","turn_end","check"],"cards":true,`; string(b[:len(want)]) != want {
		t.Errorf("on the wire %s, want it to start %s", b, want)
	}
	old, err := wire.DecodeCaps([]byte(`{"platform":"p","caps":["edit","typing","stop_typing","card","show_session"],"cards":true,"limits":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := old.Caps(), (channels.Caps{Edit: true, Typing: true, StopTyping: true, Card: true, Cards: true, ShowSession: true}); got != want {
		t.Errorf("the release before's announcement reads %+v, want %+v", got, want)
	}
}
