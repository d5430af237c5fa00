package discord

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

func TestRouteKey(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/api/v9/channels/123/messages", "POST /channels/123/messages"},
		{"PATCH", "/api/v9/channels/123/messages/456", "PATCH /channels/123/messages/{id}"},
		{"PATCH", "/api/v9/channels/123/messages/789", "PATCH /channels/123/messages/{id}"},
		{"POST", "/api/v9/channels/123/messages/456/threads", "POST /channels/123/messages/{id}/threads"},
		{"POST", "/api/v9/interactions/55/tok/callback", "POST /interactions/{id}/tok/callback"},
		{"POST", "/api/v9/webhooks/9/tok", "POST /webhooks/9/tok"},
		{"GET", "/api/v9/gateway", "GET /gateway"},
		{"GET", "/other/1", "GET /other/{id}"},
	} {
		if got := routeKey(tc.method, tc.path); got != tc.want {
			t.Errorf("routeKey(%s, %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   rateInfo
	}{
		{"requests left", 200, h("X-RateLimit-Remaining", "4", "X-RateLimit-Reset-After", "1"), "", rateInfo{}},
		{"last request", 200, h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "2.5"), "", rateInfo{wait: 2500 * time.Millisecond}},
		{"no headers", 200, h(), "", rateInfo{}},
		{"429 with body", 429, h(), `{"retry_after": 1.25}`, rateInfo{wait: 1250 * time.Millisecond}},
		{"429 with headers", 429, h("Retry-After", "3", "X-RateLimit-Reset-After", "2"), `{}`, rateInfo{wait: 3 * time.Second}},
		{"429 global by header", 429, h("X-RateLimit-Global", "true", "Retry-After", "5"), `{}`, rateInfo{wait: 5 * time.Second, global: true}},
		{"429 global by scope", 429, h("X-RateLimit-Scope", "global"), `{"retry_after": 2}`, rateInfo{wait: 2 * time.Second, global: true}},
		{"429 global by body", 429, h(), `{"retry_after": 2, "global": true}`, rateInfo{wait: 2 * time.Second, global: true}},
		{"429 saying nothing", 429, h(), `not json`, rateInfo{wait: time.Second}},
		{"absurd wait", 429, h("Retry-After", "1e12"), ``, rateInfo{wait: maxRateWait}},
		{"negative wait", 200, h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "-3"), ``, rateInfo{}},
		{"NaN", 200, h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "NaN"), ``, rateInfo{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseRateLimit(tc.status, tc.header, []byte(tc.body))
			if got != tc.want {
				t.Errorf("parseRateLimit = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter()
	t0 := time.Unix(1000, 0)
	const edit, post = "PATCH /channels/1/messages/{id}", "POST /channels/1/messages"
	l.observe(edit, rateInfo{wait: 2 * time.Second}, t0)
	var rl *channels.RateLimitError
	if err := l.check(edit, t0.Add(500*time.Millisecond)); !errors.As(err, &rl) || rl.RetryAfter != 1500*time.Millisecond {
		t.Errorf("check of an exhausted bucket = %v, want 1.5 s to wait", err)
	}
	if err := l.check(post, t0); err != nil {
		t.Errorf("check of another bucket = %v", err)
	}
	if err := l.check(edit, t0.Add(2*time.Second)); err != nil {
		t.Errorf("check after the reset = %v", err)
	}
	if len(l.blocked) != 0 {
		t.Errorf("%d buckets remembered after their reset", len(l.blocked))
	}
	l.observe(post, rateInfo{wait: 10 * time.Second, global: true}, t0)
	if err := l.check(edit, t0.Add(time.Second)); !errors.As(err, &rl) || rl.Scope != "global" || rl.RetryAfter != 9*time.Second {
		t.Errorf("check during a global limit = %v", err)
	}
	for i := range maxBlocked + 10 {
		l.observe(strings.Repeat("x", i), rateInfo{wait: time.Second}, t0)
	}
	if n := len(l.blocked); n > maxBlocked {
		t.Errorf("%d buckets remembered, want at most %d", n, maxBlocked)
	}
}

func TestApiError(t *testing.T) {
	rest := func(status, code int) error {
		return &discordgo.RESTError{Response: &http.Response{StatusCode: status, Status: http.StatusText(status)}, Message: &discordgo.APIErrorMessage{Code: code}}
	}
	limited := func(msg string, after time.Duration) error {
		return &discordgo.RateLimitError{RateLimit: &discordgo.RateLimit{TooManyRequests: &discordgo.TooManyRequests{Message: msg, RetryAfter: after}}}
	}
	for _, tc := range []struct {
		name      string
		err       error
		wantGone  bool
		wantLimit *channels.RateLimitError
	}{
		{"unknown message", rest(404, 10008), true, nil},
		{"unknown channel", rest(404, 10003), true, nil},
		{"archived", rest(400, 50083), true, nil},
		{"another author", rest(403, 50005), true, nil},
		{"old edits as REST", rest(429, 30046), true, nil},
		{"old edits as 429", limited("Maximum number of edits to messages older than 1 hour reached. Try again later", 0), true, nil},
		{"old edits from the transport", errOldMessageEdits, true, nil},
		{"a plain 404", rest(404, 0), true, nil},
		{"rate limited", limited("You are being rate limited.", 2*time.Second), false, &channels.RateLimitError{RetryAfter: 2 * time.Second, Scope: "edit"}},
		{"rate limited, zero", limited("You are being rate limited.", 0), false, &channels.RateLimitError{RetryAfter: minRetryAfter, Scope: "edit"}},
		{"exhausted bucket", &channels.RateLimitError{RetryAfter: time.Second, Scope: "PATCH /x"}, false, &channels.RateLimitError{RetryAfter: time.Second, Scope: "edit"}},
		{"missing permission", rest(403, 50013), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := editError(tc.err)
			if got := errors.Is(err, channels.ErrMessageGone); got != tc.wantGone {
				t.Errorf("editError(%v) = %v; gone %v, want %v", tc.err, err, got, tc.wantGone)
			}
			var rl *channels.RateLimitError
			errors.As(err, &rl)
			if diff := cmp.Diff(tc.wantLimit, rl); diff != "" {
				t.Errorf("editError(%v) rate limit (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

func TestReadMessage(t *testing.T) {
	const bot = "900"
	user := &discordgo.User{ID: "1", Username: "ann", GlobalName: "Ann"}
	for _, tc := range []struct {
		name   string
		m      *discordgo.Message
		want   incoming
		wantOK bool
	}{
		{"plain", &discordgo.Message{ID: "5", ChannelID: "2", GuildID: "3", Author: user, Content: " hi "},
			incoming{id: "5", channel: "2", guild: "3", author: channels.Author{ID: "1", Name: "Ann"}, text: "hi"}, true},
		{"mention", &discordgo.Message{ID: "5", ChannelID: "2", Author: user, Content: "<@900> list files", Mentions: []*discordgo.User{{ID: bot}}},
			incoming{id: "5", channel: "2", author: channels.Author{ID: "1", Name: "Ann"}, text: "list files", mentioned: true}, true},
		{"old mention syntax", &discordgo.Message{ID: "5", ChannelID: "2", Author: user, Content: "hey <@!900>"},
			incoming{id: "5", channel: "2", author: channels.Author{ID: "1", Name: "Ann"}, text: "hey", mentioned: true}, true},
		{"member nick and roles", &discordgo.Message{ID: "5", ChannelID: "2", GuildID: "3", Author: user, Member: &discordgo.Member{Nick: "Annie", Roles: []string{"r1"}}, Content: "x"},
			incoming{id: "5", channel: "2", guild: "3", author: channels.Author{ID: "1", Name: "Annie", Roles: []string{"r1"}}, text: "x"}, true},
		{"mention of the bot's role", &discordgo.Message{ID: "5", ChannelID: "2", GuildID: "3", Author: user, Content: "<@&700> list files", MentionRoles: []string{"700"}},
			incoming{id: "5", channel: "2", guild: "3", author: channels.Author{ID: "1", Name: "Ann"}, text: "list files", mentioned: true}, true},
		{"mention of another role", &discordgo.Message{ID: "5", ChannelID: "2", GuildID: "3", Author: user, Content: "<@&701> list files", MentionRoles: []string{"701"}},
			incoming{id: "5", channel: "2", guild: "3", author: channels.Author{ID: "1", Name: "Ann"}, text: "<@&701> list files"}, true},
		{"own", &discordgo.Message{ID: "5", ChannelID: "2", Author: &discordgo.User{ID: bot, Bot: true}, Content: "x"}, incoming{}, false},
		{"thread created notice", &discordgo.Message{ID: "5", ChannelID: "2", Author: user, Type: discordgo.MessageTypeThreadCreated}, incoming{}, false},
		{"no author", &discordgo.Message{ID: "5", ChannelID: "2", Content: "x"}, incoming{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := readMessage(tc.m, bot, "700")
			if ok != tc.wantOK {
				t.Fatalf("readMessage ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(incoming{})); diff != "" {
				t.Errorf("readMessage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThreadName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fix the bug", "fix the bug"},
		{"\n\n  fix\tthe   bug  \nsecond line", "fix the bug"},
		{"", defaultThreadName},
		{" \n\t", defaultThreadName},
		{"a\x00b\x07c", "abc"},
		{strings.Repeat("word ", 30), strings.TrimSpace(strings.Repeat("word ", 20)) + "…"},
	} {
		got := threadName(tc.in)
		if got != tc.want {
			t.Errorf("threadName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if n := len([]rune(got)); n > maxThreadName {
			t.Errorf("threadName(%q) has %d characters", tc.in, n)
		}
	}
}

func TestRender(t *testing.T) {
	long := strings.Repeat("x", maxMessageChars)
	for _, tc := range []struct {
		name string
		m    channels.Message
		want string
	}{
		{"text", channels.Message{Kind: channels.KindText, Text: "**bold**"}, "**bold**"},
		{"thought", channels.Message{Kind: channels.KindThought, Text: "hmm"}, ">>> 💭 hmm"},
		{"long thought", channels.Message{Kind: channels.KindThought, Text: long}, long},
		{"notice", channels.Message{Kind: channels.KindNotice, Text: "⚙️ queued"}, "⚙️ queued"},
		{"too long", channels.Message{Kind: channels.KindText, Text: long + "y"}, long[:maxMessageChars-1] + "…"},
		{"blank", channels.Message{Kind: channels.KindText, Text: " \n"}, ""},
	} {
		if got := render(tc.m); got != tc.want {
			t.Errorf("%s: render = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRunBackoff checks that Run keeps trying to connect, with a growing
// wait, while Discord cannot be reached, and stops when its context ends.
func TestRunBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := New(Options{Token: "t"})
		if err != nil {
			t.Fatal(err)
		}
		var dials atomic.Int32
		a.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("network unreachable")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx, func(context.Context, channels.Inbound) {}) }()
		// Attempts at 0 s, 1 s, 3 s, 7 s: the wait doubles.
		for _, step := range []struct {
			after time.Duration
			want  int32
		}{{500 * time.Millisecond, 1}, {time.Second, 2}, {2 * time.Second, 3}, {4 * time.Second, 4}} {
			time.Sleep(step.after) // the bubble's clock
			synctest.Wait()
			if got := dials.Load(); got != step.want {
				t.Errorf("dials after %v more = %d, want %d", step.after, got, step.want)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

func TestThreadFailure(t *testing.T) {
	rest := func(code int, msg string) error {
		return apiError("thread", &discordgo.RESTError{Message: &discordgo.APIErrorMessage{Code: code, Message: msg}})
	}
	for _, tc := range []struct {
		name string
		err  error
		want string // a part of the answer; "" for none
	}{
		{"rate limit", &channels.RateLimitError{RetryAfter: time.Minute}, "rate-limiting"},
		{"missing permissions", rest(50013, "Missing Permissions"), "Create Public Threads"},
		{"missing access", rest(50001, "Missing Access"), "Create Public Threads"},
		{"already created", rest(160004, "A thread has already been created for this message"), ""},
		{"other", rest(50035, "Invalid Form Body"), "Discord said: Invalid Form Body"},
		{"no answer", errors.New("dial tcp: connection refused"), "did not answer"},
	} {
		got := threadFailure(tc.err)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: threadFailure = %q, want it to contain %q", tc.name, got, tc.want)
		}
	}
}
