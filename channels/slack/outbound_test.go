package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/typing"
)

func TestPostInThread(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "**Done.** See [the docs](https://example.com/a?b=1&c=2) & <that>."})
	if err != nil {
		t.Fatal(err)
	}
	if h.Thread != th || !h.Known() {
		t.Errorf("handle = %+v, want a message in %v", h, th)
	}
	calls := f.callsTo("chat.postMessage")
	if len(calls) != 1 {
		t.Fatalf("chat.postMessage calls = %d, want 1", len(calls))
	}
	got := calls[0].Form
	for key, want := range map[string]string{
		"channel":   fakeChannel,
		"thread_ts": fakeThread,
		"text":      "*Done.* See <https://example.com/a?b=1&amp;c=2|the docs> &amp; &lt;that&gt;.",
	} {
		if got.Get(key) != want {
			t.Errorf("chat.postMessage %s = %q, want %q", key, got.Get(key), want)
		}
	}
	seen, _ := f.seen(fakeChannel, string(h.ID))
	if want := "*Done.* See <https://example.com/a?b=1&c=2|the docs> & <that>."; seen != want {
		t.Errorf("seen = %q, want %q", seen, want)
	}
	// A tool line does not unfurl its links.
	if _, err := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Text: "Fetch https://example.com"}); err != nil {
		t.Fatal(err)
	}
	if form := f.callsTo("chat.postMessage")[1].Form; form.Get("unfurl_links") != "false" || form.Get("unfurl_media") != "false" {
		t.Errorf("tool post unfurl_links=%q unfurl_media=%q, want false", form.Get("unfurl_links"), form.Get("unfurl_media"))
	}
}

func TestRateLimits(t *testing.T) {
	calls := []struct {
		name   string
		method string
		call   func(ctx context.Context, a *Adapter, h channels.Handle) error
	}{
		{"Post", "chat.postMessage", func(ctx context.Context, a *Adapter, h channels.Handle) error {
			_, err := a.Post(ctx, h.Thread, channels.Message{Kind: channels.KindText, Text: "x"})
			return err
		}},
		{"Edit", "chat.update", func(ctx context.Context, a *Adapter, h channels.Handle) error {
			return a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "y"})
		}},
		{"Prompt", "chat.postMessage", func(ctx context.Context, a *Adapter, h channels.Handle) error {
			_, err := a.Prompt(ctx, h.Thread, channels.Choice{Text: "ok?", Options: []channels.Option{{ID: "ok", Label: "OK"}}})
			return err
		}},
		{"Typing", "assistant.threads.setStatus", func(ctx context.Context, a *Adapter, h channels.Handle) error {
			return a.Typing(ctx, h.Thread)
		}},
		{"Reply", "chat.postEphemeral", func(ctx context.Context, a *Adapter, h channels.Handle) error {
			return a.ephemeral(h.Thread.Channel, h.Thread.Thread, "U0ANN")(ctx, "private")
		}},
	}
	answers := []struct {
		name string
		fl   failure
		want time.Duration
	}{
		{"429 with Retry-After", failure{status: http.StatusTooManyRequests, retryAfter: "7"}, 7 * time.Second},
		{"429 without Retry-After", failure{status: http.StatusTooManyRequests}, time.Second},
		{"ratelimited error", failure{slackErr: "ratelimited"}, time.Second},
	}
	for _, c := range calls {
		for _, ans := range answers {
			t.Run(c.name+"/"+ans.name, func(t *testing.T) {
				f := newFake(t, fakeOptions{})
				a := f.adapter(t, Options{})
				ctx := testCtx(t)
				if _, err := a.Detect(ctx); err != nil {
					t.Fatal(err)
				}
				h, err := a.Post(ctx, ref(fakeChannel, fakeThread), channels.Message{Kind: channels.KindText, Text: "first"})
				if err != nil {
					t.Fatal(err)
				}
				before := len(f.thread(fakeChannel, fakeThread))
				callsBefore := len(f.callsTo(c.method))
				f.failNext(c.method, ans.fl)
				err = c.call(ctx, a, h)
				var rl *channels.RateLimitError
				if !errors.As(err, &rl) {
					t.Fatalf("error = %v, want a *channels.RateLimitError", err)
				}
				if rl.RetryAfter != ans.want || rl.Scope != c.method {
					t.Errorf("RateLimitError = %+v, want RetryAfter %v and Scope %q", rl, ans.want, c.method)
				}
				if n := len(f.callsTo(c.method)) - callsBefore; n != 1 {
					t.Errorf("%s calls = %d, want 1: nothing retries", c.method, n)
				}
				if after := len(f.thread(fakeChannel, fakeThread)); after != before {
					t.Errorf("messages in the thread: %d before, %d after a refused call", before, after)
				}
				// The next call of a method with a tier waits out what
				// Slack asked without asking again (the tier learned it);
				// that of another method goes through.
				err = c.call(ctx, a, h)
				if _, tiered := methodTiers[c.method]; tiered {
					if !errors.As(err, &rl) || rl.RetryAfter > ans.want {
						t.Errorf("call right after the rate limit: %v, want a wait of at most %v", err, ans.want)
					}
					if n := len(f.callsTo(c.method)) - callsBefore; n != 1 {
						t.Errorf("%s calls = %d, want 1: the second waits its turn", c.method, n)
					}
				} else if err != nil {
					t.Errorf("call after the rate limit: %v", err)
				}
			})
		}
	}
}

func TestEditErrors(t *testing.T) {
	tests := []struct {
		slackErr string
		gone     bool
	}{
		{"message_not_found", true},
		{"cant_update_message", true},
		{"edit_window_closed", true},
		{"channel_not_found", false},
		{"msg_too_long", false},
	}
	for _, tc := range tests {
		t.Run(tc.slackErr, func(t *testing.T) {
			f := newFake(t, fakeOptions{})
			a := f.adapter(t, Options{})
			ctx := testCtx(t)
			h, err := a.Post(ctx, ref(fakeChannel, fakeThread), channels.Message{Kind: channels.KindTool, Text: "running"})
			if err != nil {
				t.Fatal(err)
			}
			f.failNext("chat.update", failure{slackErr: tc.slackErr})
			err = a.Edit(ctx, h, channels.Message{Kind: channels.KindTool, Text: "done"})
			if err == nil {
				t.Fatal("Edit = nil, want an error")
			}
			if got := errors.Is(err, channels.ErrMessageGone); got != tc.gone {
				t.Errorf("Edit = %v; errors.Is(ErrMessageGone) = %v, want %v", err, got, tc.gone)
			}
			if !strings.Contains(err.Error(), tc.slackErr) {
				t.Errorf("Edit = %v, want the error to name %s", err, tc.slackErr)
			}
		})
	}
	t.Run("another's message", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a := f.adapter(t, Options{})
		err := a.Edit(testCtx(t), channels.Handle{Thread: ref(fakeChannel, fakeThread), ID: fakeThread}, channels.Message{Text: "x"})
		if !errors.Is(err, channels.ErrMessageGone) {
			t.Errorf("Edit of a person's message = %v, want ErrMessageGone", err)
		}
	})
}

// block is the part of Block Kit JSON the prompt tests look at.
type block struct {
	Type     string `json:"type"`
	Text     *text  `json:"text,omitempty"`
	Elements []struct {
		Type     string `json:"type"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		Style    string `json:"style,omitempty"`
		Text     text   `json:"text"`
		Options  []struct {
			Value string `json:"value"`
			Text  text   `json:"text"`
		} `json:"options,omitempty"`
	} `json:"elements,omitempty"`
}

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func TestPromptButtonsAndTheirRemoval(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	long := strings.Repeat("a diff line\n", 300) // over one section's 3,000 characters
	h, err := a.Prompt(ctx, th, channels.Choice{
		Text: "**Permission needed:** Edit `main.go`\n" + long,
		Options: []channels.Option{
			{ID: "p1/allow_once", Label: "Allow", Style: "primary"},
			{ID: "p1/allow_always", Label: "Always allow"},
			{ID: "p1/reject_once", Label: "Reject", Style: "danger"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.message(fakeChannel, string(h.ID))
	var blocks []block
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatalf("blocks %s: %v", m.Blocks, err)
	}
	var sections []string
	var buttons [][4]string
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text.Type != "mrkdwn" || len([]rune(b.Text.Text)) > maxSectionChars {
				t.Errorf("section text type %q, %d characters", b.Text.Type, len([]rune(b.Text.Text)))
			}
			sections = append(sections, b.Text.Text)
		case "actions":
			for _, e := range b.Elements {
				buttons = append(buttons, [4]string{e.ActionID, e.Value, e.Style, e.Text.Text})
			}
		default:
			t.Errorf("unexpected block %q", b.Type)
		}
	}
	if got, want := strings.Join(sections, ""), Mrkdwn("**Permission needed:** Edit `main.go`\n"+long); got != want {
		t.Errorf("sections join to %q…, want the prompt's mrkdwn", got[:min(len(got), 60)])
	}
	if len(sections) != 2 {
		t.Errorf("%d sections, want 2 for a text over 3,000 characters", len(sections))
	}
	wantButtons := [][4]string{
		{"p1/allow_once", "p1/allow_once", "primary", "Allow"},
		{"p1/allow_always", "p1/allow_always", "", "Always allow"},
		{"p1/reject_once", "p1/reject_once", "danger", "Reject"},
	}
	if diff := cmp.Diff(wantButtons, buttons); diff != "" {
		t.Errorf("buttons (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(m.Text, "*Permission needed:* Edit `main.go`") {
		t.Errorf("fallback text = %q…", m.Text[:40])
	}

	// Answered: the edit replaces the text and removes the buttons.
	if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindPermission, Text: "✅ Allow — chosen by Ann"}); err != nil {
		t.Fatal(err)
	}
	edits := f.callsTo("chat.update")
	if len(edits) != 1 || edits[0].Form.Get("blocks") != "[]" {
		t.Errorf("chat.update calls = %+v, want one with blocks=[]", edits)
	}
	m, _ = f.message(fakeChannel, string(h.ID))
	if m.Blocks != nil || m.Text != "✅ Allow — chosen by Ann" {
		t.Errorf("answered prompt = %q with blocks %s, want the answer without blocks", m.Text, m.Blocks)
	}
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), "p1/allow_once"); err == nil {
		t.Error("a click on the answered prompt found its button")
	}
}

func TestPromptBlocksLimits(t *testing.T) {
	var opts []channels.Option
	for i := range 30 {
		opts = append(opts, channels.Option{ID: strings.Repeat("x", 300) + string(rune('a'+i%26)), Label: strings.Repeat("L", 100)})
	}
	blocks := promptBlocks("question", opts)
	data, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	var got []block
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Type != "actions" || len(got[1].Elements) != 1 || got[1].Elements[0].Type != "static_select" {
		t.Fatalf("blocks: %s; want a section and an actions block with one select menu", data)
	}
	if n := len(got[1].Elements[0].Options); n != 30 {
		t.Errorf("select options = %d, want 30", n)
	}
	for _, o := range got[1].Elements[0].Options {
		if len([]rune(o.Text.Text)) > maxOptionText || len([]rune(o.Value)) > maxOptionValue {
			t.Errorf("select option label %d characters, value %d characters", len([]rune(o.Text.Text)), len([]rune(o.Value)))
		}
	}
	blocks = promptBlocks("question", opts[:maxButtons])
	data, _ = json.Marshal(blocks)
	got = nil
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[1].Elements) != maxButtons {
		t.Fatalf("blocks: %s; want a section and an actions block of %d buttons", data, maxButtons)
	}
	for _, e := range got[1].Elements {
		if e.Type != "button" || len(e.ActionID) > maxActionID || len([]rune(e.Text.Text)) > maxButtonLabel || len(e.Value) > maxValue {
			t.Errorf("%s action_id %d bytes, label %d characters, value %d bytes", e.Type, len(e.ActionID), len([]rune(e.Text.Text)), len(e.Value))
		}
	}
}

func TestStatusLine(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	ctx := testCtx(t)
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	var ch channels.Adapter = a
	ty, ok := channels.As[channels.Typer](ch)
	st, ok2 := channels.As[channels.TypingStopper](ch)
	if !ok || !ok2 {
		t.Fatalf("the adapter (%T) reports no Typer and TypingStopper", ch)
	}
	th := ref(fakeChannel, fakeThread)
	if err := ty.Typing(ctx, th); err != nil {
		t.Fatal(err)
	}
	if !f.statusShown(fakeChannel, fakeThread) {
		t.Error("status not shown after Typing")
	}
	// Slack clears the status when the app replies; the adapter sets it again.
	if _, err := ch.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "partial answer"}); err != nil {
		t.Fatal(err)
	}
	if !f.statusShown(fakeChannel, fakeThread) {
		t.Error("status not shown after a post while typing")
	}
	if err := st.StopTyping(ctx, th); err != nil {
		t.Fatal(err)
	}
	if f.statusShown(fakeChannel, fakeThread) {
		t.Error("status shown after StopTyping")
	}
	// After StopTyping a post leaves the status alone.
	if _, err := ch.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "final"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.callsTo("assistant.threads.setStatus") {
		got = append(got, c.Form.Get("channel_id")+" "+c.Form.Get("thread_ts")+" "+c.Form.Get("status"))
	}
	want := []string{
		fakeChannel + " " + fakeThread + " is working…",
		fakeChannel + " " + fakeThread + " is working…", // after the post
		fakeChannel + " " + fakeThread + " ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("setStatus calls (-want +got):\n%s", diff)
	}
}

// TestStatusRefresh drives the status line the way dispatch does, with
// the typing state machine and the adapter's TypingInterval, through a
// turn of five minutes in a synctest bubble: the line never lapses (Slack
// clears it two minutes after it was set) and is cleared at the end.
func TestStatusRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeState(t, fakeOptions{})
		a, err := New(Options{AppToken: f.appToken, BotToken: f.botToken, APIURL: "http://fake.invalid/api/",
			HTTPClient: &http.Client{Transport: handlerTransport{f.handler}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if _, err := a.Detect(ctx); err != nil {
			t.Fatal(err)
		}
		ty := channels.Typer(a)
		st := channels.TypingStopper(a)
		th := ref(fakeChannel, fakeThread)
		m := typing.New(typing.Config{Mode: typing.ModeInstant, TTL: 10 * time.Minute}, a.Limits().TypingInterval)
		do := func(act typing.Action) {
			var err error
			switch act {
			case typing.Start, typing.Refresh:
				err = ty.Typing(ctx, th)
			case typing.Stop:
				err = st.StopTyping(ctx, th)
			}
			if err != nil {
				t.Fatalf("%s: %v", act, err)
			}
		}
		start := time.Now()
		do(m.TurnStart(start))
		end := start.Add(5 * time.Minute)
		for now := start; now.Before(end); now = time.Now() {
			if !f.statusShown(fakeChannel, fakeThread) {
				t.Fatalf("status not shown %v into the turn", now.Sub(start))
			}
			wake := end
			if d, ok := m.Deadline(); ok && d.Before(wake) {
				wake = d
			}
			// Look again at least every 10 s.
			if soon := now.Add(10 * time.Second); soon.Before(wake) {
				wake = soon
			}
			<-time.After(wake.Sub(now)) // fake time: the bubble's clock jumps
			do(m.Tick(time.Now()))
		}
		do(m.TurnEnd(time.Now()))
		if f.statusShown(fakeChannel, fakeThread) {
			t.Error("status shown after the turn ended")
		}
		var sets []time.Duration
		for _, c := range f.callsTo("assistant.threads.setStatus") {
			if c.Form.Get("thread_ts") == fakeThread {
				sets = append(sets, c.At.Sub(start))
			}
		}
		want := []time.Duration{0, 90 * time.Second, 180 * time.Second, 270 * time.Second, 5 * time.Minute}
		if diff := cmp.Diff(want, sets); diff != "" {
			t.Errorf("setStatus times (-want +got):\n%s", diff)
		}
	})
}

func TestDetect(t *testing.T) {
	// The status line is judged from the scopes: Detect calls nothing
	// but auth.test (no probe on a made-up thread).
	tests := []struct {
		name       string
		o          fakeOptions
		wantStatus bool
	}{
		{name: "status works", wantStatus: true},
		{name: "no chat:write scope", o: fakeOptions{scopes: "app_mentions:read,channels:history"}},
		{name: "assistant:write scope", o: fakeOptions{scopes: "assistant:write"}, wantStatus: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.o)
			var logs strings.Builder
			a := f.adapter(t, Options{Logger: newTextLogger(&logs)})
			ctx := testCtx(t)
			for range 2 {
				c, err := a.Detect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.Status != tc.wantStatus || c.BotUserID != f.botUser || c.BotID != f.botID || c.TeamID != f.team {
					t.Errorf("Detect = %+v, want Status %v and the fake's ids", c, tc.wantStatus)
				}
			}
			if n := len(f.callsTo("auth.test")); n != 1 {
				t.Errorf("auth.test calls = %d, want 1", n)
			}
			if calls := len(f.calls); calls != 1 {
				t.Errorf("Detect made %d Web API calls, want 1 (auth.test)", calls)
			}
			_, typer := channels.As[channels.Typer](a)
			_, stopper := channels.As[channels.TypingStopper](a)
			if typer != tc.wantStatus || stopper != tc.wantStatus {
				t.Errorf("the adapter reports Typer %v, TypingStopper %v; want %v", typer, stopper, tc.wantStatus)
			}
			if n := strings.Count(logs.String(), "slack capabilities detected"); n != 1 {
				t.Errorf("capability log lines = %d, want 1:\n%s", n, logs.String())
			}
			warned := strings.Contains(logs.String(), "lacks scopes the gateway uses")
			if want := tc.o.scopes != ""; warned != want {
				t.Errorf("missing-scope warning logged = %v, want %v:\n%s", warned, want, logs.String())
			}
		})
	}
	t.Run("before Detect", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a := f.adapter(t, Options{})
		if _, ok := channels.As[channels.Typer](a); ok {
			t.Error("the adapter before Detect claims the status line")
		}
	})
	t.Run("bad token", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a, err := New(Options{AppToken: f.appToken, BotToken: "xoxb-wrong", APIURL: f.srv.URL + "/api/"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Detect(testCtx(t)); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Errorf("Detect with a bad token = %v, want invalid_auth", err)
		}
		if err := a.Run(testCtx(t), func(context.Context, channels.Inbound) {}); err == nil {
			t.Error("Run with a bad token = nil, want an error")
		}
	})
	t.Run("Slack unreachable or busy at first", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a := f.adapter(t, Options{})
		var waits []int
		a.detectWait = func(attempt int, _ time.Duration) time.Duration { waits = append(waits, attempt); return 0 }
		f.failNext("auth.test", failure{status: http.StatusBadGateway}, failure{slackErr: "service_unavailable"}, failure{status: http.StatusTooManyRequests, retryAfter: "0"})
		c, err := a.Detect(testCtx(t))
		if err != nil || c.TeamID != f.team {
			t.Fatalf("Detect after three failures = %+v, %v; want the fake's team", c, err)
		}
		if len(waits) != 3 {
			t.Errorf("waited before tries %v, want 3 waits", waits)
		}
		if n := len(f.callsTo("auth.test")); n != 4 {
			t.Errorf("auth.test called %d times, want 4", n)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a := f.adapter(t, Options{})
		a.detectWait = func(int, time.Duration) time.Duration { return 0 }
		for range detectAttempts {
			f.failNext("auth.test", failure{status: http.StatusServiceUnavailable})
		}
		if _, err := a.Detect(testCtx(t)); err == nil || !strings.Contains(err.Error(), "503") {
			t.Errorf("Detect while Slack is down = %v, want the last error", err)
		}
		if n := len(f.callsTo("auth.test")); n != detectAttempts {
			t.Errorf("auth.test called %d times, want %d", n, detectAttempts)
		}
	})
	t.Run("a refused token is not tried again", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a := f.adapter(t, Options{})
		a.detectWait = func(int, time.Duration) time.Duration { t.Error("waited to try a refused token again"); return 0 }
		f.failNext("auth.test", failure{slackErr: "token_revoked"})
		if _, err := a.Detect(testCtx(t)); err == nil || !strings.Contains(err.Error(), "token_revoked") {
			t.Errorf("Detect with a revoked token = %v", err)
		}
	})
	t.Run("bad app token", func(t *testing.T) {
		f := newFake(t, fakeOptions{})
		a, err := New(Options{AppToken: "xapp-wrong", BotToken: f.botToken, APIURL: f.srv.URL + "/api/"})
		if err != nil {
			t.Fatal(err)
		}
		err = a.Run(testCtx(t), func(context.Context, channels.Inbound) {})
		if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Errorf("Run with a bad app token = %v, want invalid_auth", err)
		}
		if err := a.Run(testCtx(t), func(context.Context, channels.Inbound) {}); err == nil || !strings.Contains(err.Error(), "twice") {
			t.Errorf("second Run = %v, want an error", err)
		}
	})
}

// newTextLogger returns a logger writing text lines to w at debug level.
func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantURL string
		wantErr string
	}{
		{"default URL", Options{AppToken: "xapp-1", BotToken: "xoxb-1"}, DefaultAPIURL, ""},
		{"trailing slash added", Options{AppToken: "xapp-1", BotToken: "xoxb-1", APIURL: "http://127.0.0.1:9/api"}, "http://127.0.0.1:9/api/", ""},
		{"trailing slash kept", Options{AppToken: "xapp-1", BotToken: "xoxb-1", APIURL: "https://proxy.example/slack/api/"}, "https://proxy.example/slack/api/", ""},
		{"no app token", Options{BotToken: "xoxb-1"}, "", "app-level token"},
		{"no bot token", Options{AppToken: "xapp-1"}, "", "bot token"},
		{"bad URL", Options{AppToken: "xapp-1", BotToken: "xoxb-1", APIURL: "slack.com/api"}, "", "http or https"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("New = %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.o.APIURL != tc.wantURL {
				t.Errorf("APIURL = %q, want %q", a.o.APIURL, tc.wantURL)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	a, err := New(Options{AppToken: "xapp-1", BotToken: "xoxb-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := channels.Limits{MaxMessageChars: 3500, MinEditInterval: 1200 * time.Millisecond, MinPostInterval: time.Second, PostsPacedByChannel: true, TypingInterval: 90 * time.Second, MaxUploadBytes: 1 << 30}
	if got := a.Limits(); got != want {
		t.Errorf("Limits = %+v, want %+v", got, want)
	}
}

// Posts in one channel are paced across its threads: one that comes too
// soon is not sent and gets a RateLimitError for the rest of the second.
func TestPostsArePacedPerChannel(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{PostInterval: time.Minute})
	ctx := testCtx(t)
	if _, err := a.Post(ctx, ref(fakeChannel, "1.1"), channels.Message{Kind: channels.KindText, Text: "first"}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Post(ctx, ref(fakeChannel, "2.2"), channels.Message{Kind: channels.KindText, Text: "second thread, same channel"})
	var rl *channels.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter <= 0 || rl.RetryAfter > time.Minute {
		t.Fatalf("second post in the channel = %v, want a RateLimitError within the interval", err)
	}
	if _, err := a.Prompt(ctx, ref(fakeChannel, "1.1"), channels.Choice{Text: "ok?", Options: []channels.Option{{ID: "y", Label: "Yes"}}}); !errors.As(err, &rl) {
		t.Errorf("prompt in the paced channel = %v, want a RateLimitError", err)
	}
	if _, err := a.Post(ctx, ref("C0OTHER", "3.3"), channels.Message{Kind: channels.KindText, Text: "another channel"}); err != nil {
		t.Errorf("post in another channel: %v", err)
	}
	if n := len(f.callsTo("chat.postMessage")); n != 2 {
		t.Errorf("chat.postMessage calls = %d, want 2 (the paced ones are never sent)", n)
	}
}

func TestDetectBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		asked   time.Duration
		want    time.Duration
	}{
		{1, 0, time.Second},
		{3, 0, 4 * time.Second},
		{2, 10 * time.Second, 10 * time.Second},
		{6, 0, maxDetectWait},
		{1, time.Hour, maxDetectWait},
	} {
		if got := detectBackoff(tc.attempt, tc.asked); got != tc.want {
			t.Errorf("detectBackoff(%d, %v) = %v, want %v", tc.attempt, tc.asked, got, tc.want)
		}
	}
}

// A channel's threads take its post slots in the order they asked: a
// thread retrying the instant a slot frees does not take it from one
// that was refused before it (busy threads starved one for half a
// minute), and one that does not come back within an interval of its turn
// loses its place.
func TestChannelSlotsGoInTurn(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{PostInterval: time.Second})
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	try := func(who string, now time.Time) time.Duration {
		t.Helper()
		err := a.pace(fakeChannel, who, now)
		if err == nil {
			return 0
		}
		var rl *channels.RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("pace(%s) = %v", who, err)
		}
		return rl.RetryAfter
	}
	steps := []struct {
		who  string
		at   float64
		want time.Duration // 0: the slot is its
	}{
		{"A", 0, 0},
		{"B", 0.1, 900 * time.Millisecond},
		{"C", 0.2, 1800 * time.Millisecond},
		{"A", 1, 2 * time.Second}, // back at once: behind B and C
		{"B", 1, 0},
		{"C", 1.5, 500 * time.Millisecond}, // early: still its turn next
		{"C", 2, 0},
		{"A", 3, 0},
		{"D", 3.2, 800 * time.Millisecond},
		{"E", 3.3, 1700 * time.Millisecond},
		// D never comes back: once its place lapsed, E goes.
		{"E", 5, time.Second},
		{"E", 6, 0},
	}
	for _, s := range steps {
		if got := try(s.who, at(s.at)); got != s.want {
			t.Errorf("%s at %.1fs: waits %v, want %v", s.who, s.at, got, s.want)
		}
	}
	// Another channel is paced on its own.
	if err := a.pace("C0OTHER", "A", at(6)); err != nil {
		t.Errorf("another channel: %v", err)
	}
}

// The fake's channel limit (the cluster harness counts its 429s, which
// must be none) answers 429 to posts faster than Slack takes them, which
// the adapter's pacing never sends.
func TestFakeChannelLimit(t *testing.T) {
	f := newFake(t, fakeOptions{channelLimit: true})
	ctx := testCtx(t)
	unpaced := f.adapter(t, Options{PostInterval: -1})
	var limited error
	for i := range postBurst + 2 {
		if _, err := unpaced.Post(ctx, ref(fakeChannel, "1.1"), channels.Message{Kind: channels.KindText, Text: fmt.Sprint("burst ", i)}); err != nil {
			limited = err
		}
	}
	if rl := (*channels.RateLimitError)(nil); !errors.As(limited, &rl) || f.limitedCount() == 0 {
		t.Fatalf("posts beyond the burst: %v, %d limited; want a 429", limited, f.limitedCount())
	}
	paced := f.adapter(t, Options{})
	before := f.limitedCount()
	for i := range 3 {
		if _, err := paced.Post(ctx, ref("C0OTHER", "1.1"), channels.Message{Kind: channels.KindText, Text: fmt.Sprint("paced ", i)}); err != nil {
			if rl := (*channels.RateLimitError)(nil); !errors.As(err, &rl) {
				t.Fatal(err)
			}
		}
	}
	if n := f.limitedCount() - before; n != 0 {
		t.Errorf("%d of the paced adapter's posts limited", n)
	}
}
