package channeltest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func TestAdapterCapabilities(t *testing.T) {
	for _, o := range combos() {
		t.Run(comboName(o), func(t *testing.T) {
			a := New(o).Adapter()
			_, editor := channels.As[channels.Editor](a)
			_, typer := channels.As[channels.Typer](a)
			_, stopper := channels.As[channels.TypingStopper](a)
			_, prompter := channels.As[channels.Prompter](a)
			_, uploader := channels.As[channels.Uploader](a)
			_, former := channels.As[channels.Former](a)
			got := [6]bool{editor, typer, stopper, prompter, uploader, former}
			want := [6]bool{o.Edit, o.Typing, o.Typing, o.Prompt, o.Upload, o.Form}
			if got != want {
				t.Errorf("Editor, Typer, TypingStopper, Prompter, Uploader, Former = %v, want %v", got, want)
			}
			if got, want := a.Limits(), o.Limits; got != want {
				t.Errorf("Limits() = %+v, want %+v", got, want)
			}
		})
	}
}

// SetCaps changes what the adapter reports while it is in use, and a
// call of a capability it does not report fails for good, in the log.
func TestSetCaps(t *testing.T) {
	ctx := t.Context()
	r := New(Options{Edit: true, React: true})
	a, th := r.Adapter(), r.Thread("t1")
	if got, want := channels.CapsOf(a), (channels.Caps{Edit: true, React: true}); got != want {
		t.Fatalf("CapsOf = %+v, want %+v", got, want)
	}
	if _, ok := channels.As[channels.Uploader](a); ok {
		t.Fatal("an Uploader before SetCaps")
	}
	_, err := a.(channels.Uploader).Upload(ctx, th, channels.Upload{Name: "a.txt", Data: []byte("a")})
	if !channels.IsPermanent(err) {
		t.Errorf("Upload without the capability = %v, want a permanent error", err)
	}
	r.SetCaps(channels.Caps{Upload: true, Typing: true, Title: true})
	if got, want := channels.CapsOf(a), (channels.Caps{Upload: true, Typing: true}); got != want {
		t.Errorf("CapsOf after SetCaps = %+v, want %+v (no Titler to report)", got, want)
	}
	if _, ok := channels.As[channels.Editor](a); ok {
		t.Error("still an Editor after SetCaps took it away")
	}
	if err := a.(channels.Typer).Typing(ctx, th); err != nil {
		t.Errorf("Typing once reported: %v", err)
	}
	attempts := r.Attempts()
	if len(attempts) != 2 || attempts[0].Op != "upload" || attempts[0].Error == "" || attempts[1].Op != "typing" || attempts[1].Error != "" {
		t.Errorf("attempts = %+v, want the failed upload, then typing", attempts)
	}
}

// full returns a Recorder with every capability, limited to 500 code points.
func full() (*Recorder, channels.Adapter, channels.ThreadRef) {
	r := New(Options{Edit: true, Typing: true, Prompt: true, Limits: channels.Limits{MaxMessageChars: 500}})
	return r, r.Adapter(), r.Thread("t1")
}

// script drives a full adapter through one turn, failures included.
func script(t *testing.T) *Recorder {
	t.Helper()
	ctx := t.Context()
	r, a, th := full()
	ed := a.(channels.Editor)
	ty := a.(channels.Typer)
	st := a.(channels.TypingStopper)
	pr := a.(channels.Prompter)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustPost := func(m channels.Message) channels.Handle {
		t.Helper()
		h, err := a.Post(ctx, th, m)
		must(err)
		return h
	}

	must(ty.Typing(ctx, th))
	mustPost(channels.Message{Kind: channels.KindText, Text: "Let me check <b> & \"quote\" é 🙂."})
	tool := mustPost(channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · running"})
	must(ty.Typing(ctx, th))
	r.Inject(InjectEdit, &channels.RateLimitError{RetryAfter: time.Second, Scope: "edit"})
	if err := ed.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "lost"}); err == nil {
		t.Fatal("injected edit error did not happen")
	}
	must(ed.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · done"}))
	if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: ""}); err == nil {
		t.Fatal("empty post was accepted")
	}
	_, err := pr.Prompt(ctx, th, channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "allow"}, {ID: "reject"}}})
	must(err)
	must(st.StopTyping(ctx, th))
	must(ty.Typing(ctx, th))
	r.Note(Op{Op: "turn_end", StopReason: "end_turn"})
	return r
}

func checkGolden(t *testing.T, name string, ops []Op) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteOps(&buf, ops); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestOpLogGolden(t *testing.T) {
	r := script(t)
	t.Run("ops", func(t *testing.T) { checkGolden(t, "ops.jsonl", r.Ops()) })
	t.Run("attempts", func(t *testing.T) { checkGolden(t, "attempts.jsonl", r.Attempts()) })
}

func TestWriteOpsFieldOrder(t *testing.T) {
	op := Op{
		Op: "x", Msg: "m1", Kind: channels.KindTool, Key: "k", State: "start", Text: "t",
		Options: []string{"a"}, StopReason: "end_turn", Error: "e",
	}
	var buf bytes.Buffer
	if err := WriteOps(&buf, []Op{op, {Op: "turn_end"}}); err != nil {
		t.Fatal(err)
	}
	want := `{"op":"x","msg":"m1","kind":"tool","key":"k","state":"start","text":"t","options":["a"],"stopReason":"end_turn","error":"e"}` + "\n" +
		`{"op":"turn_end"}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("WriteOps =\n%s\nwant\n%s", got, want)
	}
}

func TestMessages(t *testing.T) {
	r := script(t)
	th := r.Thread("t1")
	want := []Message{
		{ID: "m1", Thread: th, Kind: channels.KindText, Text: "Let me check <b> & \"quote\" é 🙂."},
		{ID: "m2", Thread: th, Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · done", Edits: 1},
		{ID: "m3", Thread: th, Kind: channels.KindPermission, Text: "Allow?", Options: []string{"allow", "reject"}},
	}
	if diff := cmp.Diff(want, r.Messages()); diff != "" {
		t.Errorf("Messages() mismatch (-want +got):\n%s", diff)
	}
	if got, want := r.OpsIn(th), r.Ops()[:len(r.Ops())-1]; !cmp.Equal(got, want) {
		t.Errorf("OpsIn(%v) = %v, want all ops but the note: %v", th, got, want)
	}
	if got := r.OpsIn(r.Thread("other")); len(got) != 0 {
		t.Errorf("OpsIn(other thread) = %v, want none", got)
	}
}

func TestMessageIDs(t *testing.T) {
	ctx := t.Context()
	r, a, th := full()
	pr := a.(channels.Prompter)
	var got []channels.MessageID
	for i := range 3 {
		h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: fmt.Sprint("post ", i)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.ID)
		if h.Thread != th {
			t.Errorf("Post handle thread = %v, want %v", h.Thread, th)
		}
		// A failed post takes no id.
		r.Inject(InjectPost, errors.New("boom"))
		if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "x"}); err == nil {
			t.Fatal("injected post error did not happen")
		}
		h, err = pr.Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{ID: "ok"}}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.ID)
	}
	want := []channels.MessageID{"m1", "m2", "m3", "m4", "m5", "m6"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("message ids (-want +got):\n%s", diff)
	}
}

func TestInject(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		op   string
		call func(a channels.Adapter, th channels.ThreadRef, h channels.Handle) error
	}{
		{InjectPost, func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "hi"})
			return err
		}},
		{InjectEdit, func(a channels.Adapter, _ channels.ThreadRef, h channels.Handle) error {
			return a.(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "edited"})
		}},
		{InjectTyping, func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			return a.(channels.Typer).Typing(ctx, th)
		}},
		{InjectStopTyping, func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			return a.(channels.TypingStopper).StopTyping(ctx, th)
		}},
		{InjectPrompt, func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.(channels.Prompter).Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{ID: "ok"}}})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			r, a, th := full()
			h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "first"})
			if err != nil {
				t.Fatal(err)
			}
			first := errors.New("first failure")
			second := &channels.RateLimitError{RetryAfter: 2 * time.Second, Scope: tc.op}
			r.Inject(tc.op, first)
			r.Inject(tc.op, second)
			opsBefore := len(r.Ops())

			if err := tc.call(a, th, h); err != first {
				t.Errorf("call 1 = %v, want the first injected error", err)
			}
			var rl *channels.RateLimitError
			if err := tc.call(a, th, h); !errors.As(err, &rl) || rl != second {
				t.Errorf("call 2 = %v, want the injected *RateLimitError", err)
			}
			if err := tc.call(a, th, h); err != nil {
				t.Errorf("call 3 = %v, want nil once the injections are used up", err)
			}
			if got, want := len(r.Ops())-opsBefore, 1; got != want {
				t.Errorf("successful ops added = %d, want %d", got, want)
			}
			att := r.Attempts()
			att = att[len(att)-3:]
			var gotErrs []string
			for _, op := range att {
				gotErrs = append(gotErrs, op.Error)
			}
			wantErrs := []string{first.Error(), second.Error(), ""}
			if diff := cmp.Diff(wantErrs, gotErrs); diff != "" {
				t.Errorf("Attempts errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInjectPanics(t *testing.T) {
	tests := []struct {
		name string
		op   string
		err  error
	}{
		{"unknown op", "send", errors.New("x")},
		{"nil error", InjectPost, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Inject(%q, %v) did not panic", tc.op, tc.err)
				}
			}()
			New(Options{}).Inject(tc.op, tc.err)
		})
	}
}

func TestInjectLeftAloneByDoneContext(t *testing.T) {
	r, a, th := full()
	injected := errors.New("injected")
	r.Inject(InjectPost, injected)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg := channels.Message{Kind: channels.KindText, Text: "hi"}
	if _, err := a.Post(ctx, th, msg); !errors.Is(err, context.Canceled) {
		t.Errorf("Post with a done context = %v, want context.Canceled", err)
	}
	if _, err := a.Post(t.Context(), th, msg); err != injected {
		t.Errorf("next Post = %v, want the injected error", err)
	}
}

func TestRejects(t *testing.T) {
	ctx := t.Context()
	long := strings.Repeat("é", 501)
	tests := []struct {
		name     string
		call     func(a channels.Adapter, th channels.ThreadRef, h channels.Handle) error
		wantGone bool
	}{
		{"post empty", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText})
			return err
		}, false},
		{"post too long", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: long})
			return err
		}, false},
		{"post invalid utf-8", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "cut \xc3"})
			return err
		}, false},
		{"post unknown kind", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.Post(ctx, th, channels.Message{Kind: "shout", Text: "hi"})
			return err
		}, false},
		{"post other platform", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			th.Platform = "discord"
			_, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "hi"})
			return err
		}, false},
		{"edit unknown id", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			return a.(channels.Editor).Edit(ctx, channels.Handle{Thread: th, ID: "m99"}, channels.Message{Kind: channels.KindText, Text: "x"})
		}, true},
		{"edit in other thread", func(a channels.Adapter, th channels.ThreadRef, h channels.Handle) error {
			h.Thread.Thread = "elsewhere"
			return a.(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "x"})
		}, true},
		{"edit too long", func(a channels.Adapter, _ channels.ThreadRef, h channels.Handle) error {
			return a.(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: long})
		}, false},
		{"edit empty", func(a channels.Adapter, _ channels.ThreadRef, h channels.Handle) error {
			return a.(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindText})
		}, false},
		{"prompt without options", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.(channels.Prompter).Prompt(ctx, th, channels.Choice{Text: "q"})
			return err
		}, false},
		{"prompt duplicate option", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.(channels.Prompter).Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{ID: "a"}, {ID: "a"}}})
			return err
		}, false},
		{"prompt too long", func(a channels.Adapter, th channels.ThreadRef, _ channels.Handle) error {
			_, err := a.(channels.Prompter).Prompt(ctx, th, channels.Choice{Text: long, Options: []channels.Option{{ID: "a"}}})
			return err
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, a, th := full()
			h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "original"})
			if err != nil {
				t.Fatal(err)
			}
			wantOps, wantMsgs := r.Ops(), r.Messages()

			err = tc.call(a, th, h)
			if err == nil {
				t.Fatal("call succeeded, want an error")
			}
			if got := errors.Is(err, channels.ErrMessageGone); got != tc.wantGone {
				t.Errorf("errors.Is(%v, ErrMessageGone) = %v, want %v", err, got, tc.wantGone)
			}
			if diff := cmp.Diff(wantOps, r.Ops()); diff != "" {
				t.Errorf("Ops changed by a failed call (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantMsgs, r.Messages()); diff != "" {
				t.Errorf("Messages changed by a failed call (-want +got):\n%s", diff)
			}
			att := r.Attempts()
			if last := att[len(att)-1]; last.Error != err.Error() {
				t.Errorf("last attempt error = %q, want %q", last.Error, err.Error())
			}
		})
	}
}

func TestLimitCountsCodePoints(t *testing.T) {
	_, a, th := full()
	for _, text := range []string{strings.Repeat("é", 500), strings.Repeat("🙂", 500), strings.Repeat("x", 500)} {
		if _, err := a.Post(t.Context(), th, channels.Message{Kind: channels.KindText, Text: text}); err != nil {
			t.Errorf("Post of 500 code points (%d bytes): %v", len(text), err)
		}
	}
}

func TestTypingStates(t *testing.T) {
	ctx := t.Context()
	r, a, _ := full()
	ty, st := a.(channels.Typer), a.(channels.TypingStopper)
	t1, t2 := r.Thread("t1"), r.Thread("t2")
	steps := []struct {
		stop bool
		th   channels.ThreadRef
		want string
	}{
		{false, t1, "start"},
		{false, t1, "refresh"},
		{false, t2, "start"},
		{true, t1, "stop"},
		{true, t1, "stop"},
		{false, t1, "start"},
		{false, t2, "refresh"},
	}
	for i, s := range steps {
		var err error
		if s.stop {
			err = st.StopTyping(ctx, s.th)
		} else {
			err = ty.Typing(ctx, s.th)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		ops := r.Ops()
		if got := ops[len(ops)-1]; !cmp.Equal(got, Op{Op: "typing", State: s.want}) {
			t.Errorf("step %d: op %+v, want state %q", i, got, s.want)
		}
		if got, want := r.TypingShown(s.th), !s.stop; got != want {
			t.Errorf("step %d: TypingShown(%v) = %v, want %v", i, s.th, got, want)
		}
	}
}

func TestDeliverWithoutRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		err := r.Deliver(ctx, channels.Inbound{Text: "lost"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Deliver without Run = %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestRunDeliversAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{})
		ctx, cancel := context.WithCancel(t.Context())
		var got []string
		done := make(chan error, 1)
		go func() {
			done <- r.Adapter().Run(ctx, func(_ context.Context, in channels.Inbound) {
				got = append(got, in.Text) // Deliver waits for the handler
			})
		}()
		for _, text := range []string{"one", "two"} {
			if err := r.Deliver(t.Context(), channels.Inbound{Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff([]string{"one", "two"}, got); diff != "" {
			t.Errorf("delivered (-want +got):\n%s", diff)
		}
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		default:
			t.Error("Run still running after its context ended")
		}
	})
}

func TestDeliverWaitsForHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		release := make(chan struct{})
		go r.Adapter().Run(ctx, func(context.Context, channels.Inbound) { <-release })
		delivered := make(chan error, 1)
		go func() { delivered <- r.Deliver(t.Context(), channels.Inbound{Text: "slow"}) }()
		synctest.Wait()
		select {
		case err := <-delivered:
			t.Fatalf("Deliver returned %v before the handler did", err)
		default:
		}
		close(release)
		if err := <-delivered; err != nil {
			t.Errorf("Deliver = %v, want nil", err)
		}
	})
}

func TestClick(t *testing.T) {
	ctx := t.Context()
	r, a, th := full()
	post, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := a.(channels.Prompter).Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{ID: "allow"}, {ID: "reject"}}})
	if err != nil {
		t.Fatal(err)
	}
	inbound := make(chan channels.Inbound, 1)
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		a.Run(runCtx, func(_ context.Context, in channels.Inbound) { inbound <- in })
	})
	defer wg.Wait()
	defer cancel()

	who := channels.Author{ID: "u1", Name: "Ann"}
	bad := []struct {
		name   string
		h      channels.Handle
		option string
	}{
		{"not a prompt", post, "allow"},
		{"unknown option", prompt, "maybe"},
		{"unknown message", channels.Handle{Thread: th, ID: "m9"}, "allow"},
		{"other thread", channels.Handle{Thread: r.Thread("t2"), ID: prompt.ID}, "allow"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.Click(ctx, who, tc.h, tc.option); err == nil {
				t.Error("Click succeeded, want an error")
			}
		})
	}
	if err := r.Click(ctx, who, prompt, "reject"); err != nil {
		t.Fatalf("Click: %v", err)
	}
	got := <-inbound
	if got.Reply == nil {
		t.Fatal("inbound after Click has no Reply func")
	}
	if err := got.Reply(ctx, "only approvers can answer"); err != nil {
		t.Fatalf("Reply: %v", err)
	}
	got.Reply = nil
	want := channels.Inbound{Thread: th, Author: who, Choice: &channels.ChoiceAnswer{Prompt: prompt, OptionID: "reject"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inbound after Click (-want +got):\n%s", diff)
	}
	ops := r.OpsIn(th)
	if last := ops[len(ops)-1]; last.Op != "reply" || last.Text != "only approvers can answer" {
		t.Errorf("last op = %+v, want the private reply", last)
	}
	// An answered prompt is edited: its buttons are gone.
	if err := r.Adapter().(channels.Editor).Edit(ctx, prompt, channels.Message{Kind: channels.KindPermission, Text: "answered"}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	if err := r.Click(ctx, who, prompt, "reject"); err == nil {
		t.Error("Click on an edited prompt succeeded, want an error: it has no buttons")
	}
}

// TestConcurrent exercises every method from many goroutines; run it with
// -race.
func TestConcurrent(t *testing.T) {
	ctx := t.Context()
	r, a, _ := full()
	runCtx, cancel := context.WithCancel(ctx)
	var run sync.WaitGroup
	var inbound sync.Map
	run.Go(func() {
		a.Run(runCtx, func(_ context.Context, in channels.Inbound) { inbound.Store(in.ID, true) })
	})

	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			th := r.Thread(fmt.Sprint("t", w))
			for i := range rounds {
				h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Key: "k", Text: fmt.Sprint(w, " ", i)})
				if err != nil {
					t.Error(err)
					return
				}
				if err := a.(channels.Editor).Edit(ctx, h, channels.Message{Kind: channels.KindTool, Key: "k", Text: "done"}); err != nil {
					t.Error(err)
				}
				if err := a.(channels.Typer).Typing(ctx, th); err != nil {
					t.Error(err)
				}
				if err := r.Deliver(ctx, channels.Inbound{Thread: th, ID: channels.MessageID(fmt.Sprint(w, "/", i)), Text: "hi"}); err != nil {
					t.Error(err)
				}
				r.Inject(InjectStopTyping, errors.New("flaky"))
				a.(channels.TypingStopper).StopTyping(ctx, th)
				r.Note(Op{Op: "turn_end"})
				_ = r.Ops()
				_ = r.Messages()
				_ = r.TypingShown(th)
			}
		})
	}
	wg.Wait()
	cancel()
	run.Wait()

	msgs := r.Messages()
	if got, want := len(msgs), workers*rounds; got != want {
		t.Fatalf("%d messages, want %d", got, want)
	}
	for i, m := range msgs {
		if want := channels.MessageID(fmt.Sprint("m", i+1)); m.ID != want {
			t.Errorf("message %d has id %q, want %q", i, m.ID, want)
		}
		if m.Edits != 1 || m.Text != "done" {
			t.Errorf("message %s: %d edits, text %q; want 1 edit, text %q", m.ID, m.Edits, m.Text, "done")
		}
	}
	n := 0
	inbound.Range(func(any, any) bool { n++; return true })
	if n != workers*rounds {
		t.Errorf("%d inbound messages delivered, want %d", n, workers*rounds)
	}
	// Per thread, the log keeps each worker's own order.
	for w := range workers {
		var kinds []string
		for _, op := range r.OpsIn(r.Thread(fmt.Sprint("t", w))) {
			kinds = append(kinds, op.Op+op.State)
		}
		// StopTyping always failed (injected; every call is preceded by its
		// own injection), so typing stays on: only the first call starts it,
		// and no stop is logged.
		want := make([]string, 0, 3*rounds)
		for i := range rounds {
			state := "typingrefresh"
			if i == 0 {
				state = "typingstart"
			}
			want = append(want, "send", "edit", state)
		}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("thread t%d ops (-want +got):\n%s", w, diff)
		}
	}
}

func TestWaitFor(t *testing.T) {
	r := New(Options{Edit: true})
	th := r.Thread("w")
	done := make(chan error, 1)
	go func() {
		done <- r.WaitFor(t.Context(), th, func(ops []Op) bool { return len(ops) == 2 })
	}()
	if _, err := r.Adapter().Post(t.Context(), th, channels.Message{Kind: channels.KindText, Text: "one"}); err != nil {
		t.Fatal(err)
	}
	r.NoteIn(th, Op{Op: "turn_end"})
	if err := <-done; err != nil {
		t.Fatalf("WaitFor: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.WaitFor(ctx, th, func([]Op) bool { return false }); err == nil {
		t.Error("WaitFor with a done context returned nil")
	}
}
