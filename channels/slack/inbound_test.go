package slack

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// running is an adapter's Run in a test, with the inbound messages it
// delivered.
type running struct {
	t       *testing.T
	inbound chan channels.Inbound
}

// run starts a.Run with handler h (nil: collect into the returned
// running) and stops it, checking for leaked goroutines, when the test
// ends.
func run(t *testing.T, a *Adapter, h func(context.Context, channels.Inbound)) *running {
	t.Helper()
	leaks := channeltest.LeakCheck(t)
	r := &running{t: t, inbound: make(chan channels.Inbound, 100)}
	if h == nil {
		h = func(ctx context.Context, in channels.Inbound) {
			select {
			case r.inbound <- in:
			case <-ctx.Done():
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, h) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil after its context ended", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10 s after its context ended")
		}
		leaks()
	})
	return r
}

// next returns the next inbound message.
func (r *running) next(ctx context.Context) channels.Inbound {
	r.t.Helper()
	select {
	case in := <-r.inbound:
		return in
	case <-ctx.Done():
		r.t.Fatal("no inbound message")
		return channels.Inbound{}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAckBeforeHandler(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	type call struct {
		text  string
		acked bool
	}
	calls := make(chan call, 10)
	var mu sync.Mutex
	envs := map[string]string{} // ts → envelope ids joined
	run(t, a, func(ctx context.Context, in channels.Inbound) {
		mu.Lock()
		ids := envs[string(in.ID)]
		mu.Unlock()
		// The handler waits for the fake to see the acks: an adapter that
		// acknowledged after its handler returned would never get there.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		acked := true
		for id := range strings.SplitSeq(ids, ",") {
			if f.waitAck(wctx, id) != nil {
				acked = false
			}
		}
		calls <- call{in.Text, acked}
	})
	ctx := testCtx(t)
	mu.Lock() // the handler cannot look before envs is filled
	s, err := f.say(ctx, sayOptions{user: "U0ANN", text: "hello", mention: true})
	envs[s.ts] = strings.Join(s.envelopes, ",")
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-calls:
		if c.text != "hello" || !c.acked {
			t.Errorf("handler call = %+v, want text hello with every envelope acknowledged before", c)
		}
	case <-ctx.Done():
		t.Fatal("no handler call")
	}
}

// TestAckWhileHandlerBlocks: envelopes are acknowledged within Slack's
// three seconds even while the handler is busy with an earlier one.
func TestAckWhileHandlerBlocks(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	release := make(chan struct{})
	got := make(chan string, 10)
	run(t, a, func(ctx context.Context, in channels.Inbound) {
		got <- in.Text
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	ctx := testCtx(t)
	first, err := f.say(ctx, sayOptions{user: "U0ANN", text: "first", mention: true})
	if err != nil {
		t.Fatal(err)
	}
	if text := <-got; text != "first" {
		t.Fatalf("first handler call = %q", text)
	}
	// In the same thread, so its delivery waits for the first one.
	s, err := f.say(ctx, sayOptions{user: "U0ANN", thread: first.ts, text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, id := range s.envelopes {
		if err := f.waitAck(actx, id); err != nil {
			t.Errorf("envelope %s not acknowledged while the handler was busy: %v", id, err)
		}
	}
	close(release)
	if text := <-got; text != "second" {
		t.Errorf("second handler call = %q", text)
	}
}

// TestInboundRouting checks which events become inbound messages: each
// case acts, then a person mentions the app with "sentinel" in every
// thread an event of the case went to (each thread's events are delivered
// in order, threads independently); the messages delivered up to the
// last sentinel, grouped by thread, must be exactly want.
func TestInboundRouting(t *testing.T) {
	const other = "1700000000.000777" // a thread nobody mentioned the app in
	tests := []struct {
		name string
		o    fakeOptions
		act  func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter)
		want []string // "author: text"
	}{
		{
			name: "mention, message event first",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0ANN", thread: other, text: "hi there", mention: true})
			},
			want: []string{"Ann: hi there"},
		},
		{
			name: "mention, app_mention event first",
			o:    fakeOptions{mentionFirst: true},
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0ANN", thread: other, text: "hi there", mention: true})
			},
			want: []string{"Ann: hi there"},
		},
		{
			name: "mention in a bound thread runs once",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0ANN", thread: fakeThread, text: "mentioned again", mention: true})
			},
			want: []string{"Ann: mentioned again"},
		},
		{
			name: "mention in a bound thread runs once, app_mention event first",
			o:    fakeOptions{mentionFirst: true},
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0ANN", thread: fakeThread, text: "mentioned again", mention: true})
			},
			want: []string{"Ann: mentioned again"},
		},
		{
			name: "mention at the top starts a thread",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				s := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "new thread", mention: true})
				f.mustSay(ctx, sayOptions{user: "U0BOB", thread: s.ts, text: "reply without mention"})
			},
			want: []string{"Ann: new thread", "Bob: reply without mention"},
		},
		{
			name: "later messages need no mention",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0ANN", thread: other, text: "start", mention: true})
				f.mustSay(ctx, sayOptions{user: "U0BOB", thread: other, text: "no mention"})
			},
			want: []string{"Ann: start", "Bob: no mention"},
		},
		{
			name: "unbound thread and top-level messages are not for the app",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0ANN", thread: other, text: "not for the app"})
				f.mustSay(ctx, sayOptions{user: "U0ANN", text: "top level chatter"})
			},
			want: nil,
		},
		{
			name: "redelivered events run once",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				s := f.mustSay(ctx, sayOptions{user: "U0ANN", thread: other, text: "once", mention: true})
				for _, env := range s.raw {
					f.mustRedeliver(ctx, env, 1)
					f.mustRedeliver(ctx, env, 2)
				}
				b := f.mustSay(ctx, sayOptions{user: "U0BOB", thread: other, text: "bound reply"})
				f.mustRedeliver(ctx, b.raw[0], 1)
			},
			want: []string{"Ann: once", "Bob: bound reply"},
		},
		{
			name: "own posts and the echoes of their edits are ignored",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				h, err := a.Post(ctx, ref(fakeChannel, fakeThread), channels.Message{Kind: channels.KindText, Text: "from the app"})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "edited by the app"}); err != nil {
					t.Fatal(err)
				}
			},
			want: nil,
		},
		{
			name: "other bots arrive marked as bots",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mustSay(ctx, sayOptions{user: "U0OTHERBOT", botID: "B0OTHER", thread: fakeThread, text: "beep"})
			},
			want: []string{"Other bot (bot): beep"},
		},
		{
			name: "direct messages need no mention",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				s := f.mustSay(ctx, sayOptions{user: "U0ANN", channel: "D0DM", kind: "im", text: "dm top"})
				f.mustSay(ctx, sayOptions{user: "U0ANN", channel: "D0DM", kind: "im", thread: s.ts, text: "dm reply"})
			},
			want: []string{"Ann: dm top", "Ann: dm reply"},
		},
		{
			name: "edits and deletions by people are not new messages",
			act: func(ctx context.Context, t *testing.T, f *fakeSlack, a *Adapter) {
				f.mu.Lock()
				env := f.eventEnvelopeLocked(map[string]any{"type": "message", "subtype": "message_changed", "channel": fakeChannel,
					"channel_type": "channel", "ts": "1700000300.000001",
					"message": map[string]any{"type": "message", "user": "U0ANN", "text": "changed", "ts": "1700000300.000000", "thread_ts": fakeThread}}, "", 0)
				env2 := f.eventEnvelopeLocked(map[string]any{"type": "message", "subtype": "message_deleted", "channel": fakeChannel,
					"channel_type": "channel", "ts": "1700000300.000002", "deleted_ts": "1700000300.000000",
					"previous_message": map[string]any{"type": "message", "user": "U0ANN", "text": "gone", "ts": "1700000300.000000"}}, "", 0)
				f.mu.Unlock()
				if err := f.send(ctx, env); err != nil {
					t.Fatal(err)
				}
				if err := f.send(ctx, env2); err != nil {
					t.Fatal(err)
				}
			},
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.o)
			f.addUser("U0ANN", "Ann")
			f.addUser("U0BOB", "Bob")
			a := f.adapter(t, Options{})
			r := run(t, a, nil)
			ctx := testCtx(t)
			// Bind the sentinel's thread first.
			f.mustSay(ctx, sayOptions{user: "U0BOB", thread: fakeThread, text: "bind", mention: true})
			if in := r.next(ctx); in.Text != "bind" {
				t.Fatalf("first inbound = %q, want bind", in.Text)
			}
			mark := f.eventCount()
			tc.act(ctx, t, f, a)
			threads := f.threadsSince(mark)
			for _, th := range threads {
				f.mustSay(ctx, sayOptions{user: "U0BOB", channel: th.channel, kind: th.kind, thread: th.thread, text: "sentinel", mention: true})
			}
			var got []channels.Inbound
			for sentinels := 0; sentinels < len(threads); {
				in := r.next(ctx)
				if in.Text == "sentinel" {
					sentinels++
					continue
				}
				got = append(got, in)
			}
			slices.SortStableFunc(got, func(x, y channels.Inbound) int {
				return strings.Compare(x.Thread.Channel+"/"+x.Thread.Thread, y.Thread.Channel+"/"+y.Thread.Thread)
			})
			var gotText []string
			for _, in := range got {
				who := in.Author.Name
				if in.Author.Bot {
					who += " (bot)"
				}
				gotText = append(gotText, who+": "+in.Text)
			}
			if diff := cmp.Diff(tc.want, gotText); diff != "" {
				t.Errorf("inbound messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInboundFields(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	s, err := f.say(ctx, sayOptions{user: "U0ANN", text: "run <https://example.com|example.com> &amp; tell me", mention: true})
	if err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx)
	want := channels.Inbound{
		Thread: ref(fakeChannel, s.ts),
		Author: channels.Author{ID: "U0ANN", Name: "Ann"},
		Text:   "run https://example.com & tell me",
		ID:     channels.MessageID(s.ts),
		Event:  s.eventIDs[1], // the app_mention: a top-level message event is not delivered
		Space:  f.team,
		Time:   tsTime(s.ts), // its ts (TestTSTime)
	}
	if diff := cmp.Diff(want, in, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Reply" }, cmp.Ignore())); diff != "" {
		t.Errorf("inbound (-want +got):\n%s", diff)
	}
	if in.Reply == nil {
		t.Fatal("inbound Reply is nil, want an ephemeral reply")
	}
	if err := in.Reply(ctx, "only **you** see this"); err != nil {
		t.Fatalf("Reply: %v", err)
	}
	got := f.ephemeralsTo("U0ANN")
	wantEph := []fakeEphemeral{{Channel: fakeChannel, User: "U0ANN", ThreadTS: s.ts, Text: "only *you* see this"}}
	if diff := cmp.Diff(wantEph, got); diff != "" {
		t.Errorf("ephemeral messages (-want +got):\n%s", diff)
	}
	// A second message by Ann needs no second users.info.
	if _, err := f.say(ctx, sayOptions{user: "U0ANN", thread: s.ts, text: "again"}); err != nil {
		t.Fatal(err)
	}
	r.next(ctx)
	if n := len(f.callsTo("users.info")); n != 1 {
		t.Errorf("users.info calls = %d, want 1 (names are cached)", n)
	}
}

func TestKnownThread(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	var mu sync.Mutex
	var asked []channels.ThreadRef
	known := "1700000000.000555"
	a := f.adapter(t, Options{KnownThread: func(_ context.Context, th channels.ThreadRef) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, th)
		return th.Thread == known
	}})
	r := run(t, a, nil)
	ctx := testCtx(t)
	for _, s := range []sayOptions{
		{user: "U0ANN", thread: "1700000000.000999", text: "unknown thread"},
		{user: "U0ANN", thread: "1700000000.000999", text: "unknown thread again"},
		{user: "U0ANN", thread: known, text: "bound before the restart"},
		{user: "U0ANN", thread: known, text: "and again"},
		// Delivered after the unknown thread's messages were looked at.
		{user: "U0ANN", thread: "1700000000.000999", text: "sentinel", mention: true},
	} {
		if _, err := f.say(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(got) < 3 {
		got = append(got, r.next(ctx).Text)
	}
	got = slices.DeleteFunc(got, func(text string) bool { return text == "sentinel" })
	if diff := cmp.Diff([]string{"bound before the restart", "and again"}, got); diff != "" {
		t.Errorf("inbound (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	// The threads' lanes ask independently: in any order, once each.
	slices.SortFunc(asked, func(x, y channels.ThreadRef) int { return strings.Compare(x.Thread, y.Thread) })
	wantAsked := []channels.ThreadRef{ref(fakeChannel, known), ref(fakeChannel, "1700000000.000999")}
	if diff := cmp.Diff(wantAsked, asked); diff != "" {
		t.Errorf("KnownThread calls (-want +got):\n%s", diff)
	}
}

func TestUserGroupsAsRoles(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	f.mu.Lock()
	f.groups["S0DEVS"] = []string{"U0ANN", "U0BOB"}
	f.groups["S0OPS"] = []string{"U0BOB"}
	f.mu.Unlock()
	a := f.adapter(t, Options{UserGroups: true})
	r := run(t, a, nil)
	ctx := testCtx(t)
	if _, err := f.say(ctx, sayOptions{user: "U0ANN", text: "hi", mention: true}); err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx)
	if diff := cmp.Diff([]string{"S0DEVS"}, in.Author.Roles); diff != "" {
		t.Errorf("Author.Roles (-want +got):\n%s", diff)
	}
}

func TestClickInbound(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	h, err := a.Prompt(ctx, th, channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "p1/allow", Label: "Allow", Style: "primary"}}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), "p1/allow")
	if err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx)
	if !f.acked(env) {
		// The ack is written before the handler runs, but the fake may read
		// it a moment later.
		if err := f.waitAck(ctx, env); err != nil {
			t.Error(err)
		}
	}
	if in.Choice == nil {
		t.Fatalf("inbound = %+v, want a Choice", in)
	}
	if diff := cmp.Diff(channels.ChoiceAnswer{Prompt: h, OptionID: "p1/allow"}, *in.Choice); diff != "" {
		t.Errorf("Choice (-want +got):\n%s", diff)
	}
	if in.Thread != th || in.Author.ID != "U0ANN" || in.Author.Name != "Ann" || in.Space != f.team {
		t.Errorf("inbound = thread %v author %+v space %q", in.Thread, in.Author, in.Space)
	}
	if err := in.Reply(ctx, "Sorry, only approvers can answer this prompt."); err != nil {
		t.Fatal(err)
	}
	want := []fakeEphemeral{{Channel: fakeChannel, User: "U0ANN", ThreadTS: fakeThread, Text: "Sorry, only approvers can answer this prompt."}}
	if diff := cmp.Diff(want, f.ephemeralsTo("U0ANN")); diff != "" {
		t.Errorf("ephemeral refusal (-want +got):\n%s", diff)
	}
}

func TestInboundText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<@U0BOT> hello", "hello"},
		{"<@U0BOT>: hello", "hello"},
		{"<@U0BOT|gateway>, hello", "hello"},
		{"  <@U0BOT>   stop  ", "stop"},
		{"<@U0BOTX> hello", "<@U0BOTX> hello"},
		{"hello <@U0BOT>", "hello <@U0BOT>"},
		{"a &lt;b&gt; &amp;amp; c", "a <b> &amp; c"},
		{"see <https://example.com/x?a=1&amp;b=2>", "see https://example.com/x?a=1&b=2"},
		{"see <https://example.com|example.com>", "see https://example.com"},
		{"see <https://example.com/docs|the docs>", "see the docs (https://example.com/docs)"},
		{"mail <mailto:a@b.c|a@b.c>", "mail mailto:a@b.c"},
		{"ask <@U0ANN> or <@U0BOB|bob>", "ask <@U0ANN> or @bob"},
		{"in <#C123|general> and <#C456>", "in #general and <#C456>"},
		{"<!here> look, <!subteam^S1|@devs>", "@here look, @devs"},
		{"broken <tag", "broken <tag"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := inboundText(tc.in, "U0BOT"); got != tc.want {
				t.Errorf("inboundText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Files shared with a message: small text files are read with the bot
// token for the agent; others are described. A message with only a file
// is delivered too.
func TestFilesAreRead(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	paste := "ERROR: connection refused\n  at db.go:12\n"
	f.mustSay(ctx, sayOptions{user: "U0ANN", text: "", mention: true, files: []fakeFile{
		{name: "error.log", mimetype: "text/plain", body: []byte(paste)},
		{name: "diagram.png", mimetype: "image/png", body: pngBytes},
		{name: "spec.txt", mimetype: "text/plain", mode: "external", body: []byte("elsewhere")},
	}})
	in := r.next(ctx)
	if in.Text != "" || len(in.Files) != 3 || in.Files[0].Text != "" || in.Fetch == nil {
		t.Fatalf("inbound = %+v, want no text and 3 files to fetch", in)
	}
	downloads := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.downloads
	}
	if n := downloads(); n != 0 {
		t.Errorf("%d downloads before the gateway asked", n)
	}
	in.Files = in.Fetch(ctx)
	if n := downloads(); n != 2 {
		t.Errorf("%d downloads, want the text file and the image", n)
	}
	want := []channels.File{
		{Name: "error.log", ContentType: "text/plain", Size: len(paste), Text: paste},
		{Name: "diagram.png", ContentType: "image/png", Size: len(pngBytes), Data: pngBytes},
		{Name: "spec.txt", ContentType: "text/plain", Size: 9, Skipped: "it is stored outside Slack"},
	}
	for i, w := range want {
		got := in.Files[i]
		if !strings.HasPrefix(got.URL, "https://fake.slack.com/files/") {
			t.Errorf("file %d URL = %q, want its permalink", i, got.URL)
		}
		got.URL = ""
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("file %d (-want +got):\n%s", i, diff)
		}
	}
}

// pngBytes is the start of a PNG file: enough for its type to be sniffed.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// The bot token goes only to Slack's hosts and the configured API host.
func TestFileRequestsKeepTheToken(t *testing.T) {
	a, err := New(Options{AppToken: "xapp-1-x", BotToken: "xoxb-secret", APIURL: "http://127.0.0.1:9/api/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		link     string
		withAuth bool
	}{
		{"https://files.slack.com/files-pri/T1-F1/download/a.txt", true},
		{"http://files.slack.com/files-pri/T1-F1/download/a.txt", false}, // not over TLS
		{"http://127.0.0.1:9/files-pri/T1-F1/a.txt", true},
		{"https://files.slack.com.evil.example/a.txt", false},
		{"https://drive.example.com/a.txt", false},
	} {
		req, err := a.fileRequest(t.Context(), tc.link)
		if err != nil {
			t.Fatalf("fileRequest(%s): %v", tc.link, err)
		}
		if got := req.Header.Get("Authorization") != ""; got != tc.withAuth {
			t.Errorf("fileRequest(%s) sends the token: %v, want %v", tc.link, got, tc.withAuth)
		}
	}
	if _, err := a.fileRequest(t.Context(), ""); err == nil {
		t.Error("fileRequest of no link = nil error")
	}
}

// Check follows the Socket Mode connection.
func TestCheckFollowsTheConnection(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	if err := a.Check(); err == nil || err.Error() != "not running" {
		t.Errorf("Check before Run = %v, want not running", err)
	}
	r := run(t, a, nil)
	ctx := testCtx(t)
	f.mustSay(ctx, sayOptions{user: "U0ANN", text: "hello", mention: true})
	r.next(ctx) // the connection event came before this one
	if err := a.Check(); err != nil {
		t.Errorf("Check while connected = %v, want nil", err)
	}
	if err := a.Check(); err != nil {
		t.Errorf("Check of the adapter's Channel = %v, want nil", err)
	}
}

// TestCommands: a message that starts with a gateway command (after a
// mention of the app, or the space Slack asks for before a slash that is
// not its own command) arrives as that command; an agent's own slash
// command and other text arrive as messages (trimmed, as all text).
func TestCommands(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	s, err := f.say(ctx, sayOptions{user: "U0ANN", text: "open a thread", mention: true})
	if err != nil {
		t.Fatal(err)
	}
	r.next(ctx)
	for _, tc := range []struct {
		text    string
		mention bool
		want    *channels.Command
		wantTxt string
	}{
		{" /stop", false, &channels.Command{Name: channels.CommandStop}, "/stop"},
		{"/Stop the tests", true, &channels.Command{Name: channels.CommandStop, Args: "the tests"}, "/Stop the tests"},
		{" /compact", false, nil, "/compact"},
		{"/stopwatch", false, nil, "/stopwatch"},
		{"stop", false, nil, "stop"}, // a stop word: the router's stop words judge it
	} {
		if _, err := f.say(ctx, sayOptions{user: "U0ANN", thread: s.ts, text: tc.text, mention: tc.mention}); err != nil {
			t.Fatal(err)
		}
		in := r.next(ctx)
		wantIntent := channels.IntentMessage
		if tc.want != nil {
			wantIntent = channels.IntentCommand
		}
		if in.Intent() != wantIntent || !cmp.Equal(in.Command, tc.want) || in.Text != tc.wantTxt {
			t.Errorf("%q (mention %v) arrived as %v, command %+v, text %q; want %v, %+v, %q",
				tc.text, tc.mention, in.Intent(), in.Command, in.Text, wantIntent, tc.want, tc.wantTxt)
		}
	}
}
