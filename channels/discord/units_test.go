package discord

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

func TestRouteOf(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         route
	}{
		{"POST", "/api/v9/channels/123/messages", route{"POST /channels/{channel}/messages", "channels/123"}},
		{"PATCH", "/api/v9/channels/123/messages/456", route{"PATCH /channels/{channel}/messages/{id}", "channels/123"}},
		{"PATCH", "/api/v9/channels/124/messages/789", route{"PATCH /channels/{channel}/messages/{id}", "channels/124"}},
		{"POST", "/api/v9/channels/123/messages/456/threads", route{"POST /channels/{channel}/messages/{id}/threads", "channels/123"}},
		{"POST", "/api/v9/channels/123/typing", route{"POST /channels/{channel}/typing", "channels/123"}},
		{"PATCH", "/api/v9/guilds/77/members/5", route{"PATCH /guilds/{guild}/members/{id}", "guilds/77"}},
		{"POST", "/api/v9/interactions/55/tok/callback", route{"POST /interactions/{interaction}/{token}/callback", "interactions/55/tok"}},
		{"POST", "/api/v9/webhooks/9/tok", route{"POST /webhooks/{webhook}/{token}", "webhooks/9/tok"}},
		{"PATCH", "/api/v9/webhooks/9/tok/messages/@original", route{"PATCH /webhooks/{webhook}/{token}/messages/@original", "webhooks/9/tok"}},
		{"PUT", "/api/v9/channels/123/messages/456/reactions/🛑/@me", route{"PUT /channels/{channel}/messages/{id}/reactions/{emoji}/@me", "channels/123"}},
		{"DELETE", "/api/v9/channels/123/messages/457/reactions/ok:42/@me", route{"DELETE /channels/{channel}/messages/{id}/reactions/{emoji}/@me", "channels/123"}},
		{"GET", "/api/v9/gateway", route{"GET /gateway", ""}},
		{"GET", "/api/v9/users/@me", route{"GET /users/@me", ""}},
		{"GET", "/other/1", route{"GET /other/{id}", ""}},
	} {
		if got := routeOf(tc.method, tc.path); got != tc.want {
			t.Errorf("routeOf(%s, %s) = %+v, want %+v", tc.method, tc.path, got, tc.want)
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
		{"requests left", 200, h("X-RateLimit-Remaining", "4", "X-RateLimit-Reset-After", "1"), "", rateInfo{counted: true, remaining: 4, resetAfter: time.Second}},
		{"all headers", 200, h("X-RateLimit-Bucket", "abcd1234", "X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "2.5"), "",
			rateInfo{bucket: "abcd1234", counted: true, limit: 5, resetAfter: 2500 * time.Millisecond}},
		{"bucket only", 200, h("X-RateLimit-Bucket", "abcd1234"), "", rateInfo{bucket: "abcd1234"}},
		{"bucket too long", 200, h("X-RateLimit-Bucket", strings.Repeat("b", maxBucketID+1)), "", rateInfo{}},
		{"no reset", 200, h("X-RateLimit-Remaining", "0"), "", rateInfo{}},
		{"no headers", 200, h(), "", rateInfo{}},
		{"429 with body", 429, h(), `{"retry_after": 1.25}`, rateInfo{limited: true, wait: 1250 * time.Millisecond}},
		{"429 with headers", 429, h("Retry-After", "3", "X-RateLimit-Reset-After", "2"), `{}`, rateInfo{limited: true, wait: 3 * time.Second}},
		{"429 of a bucket", 429, h("X-RateLimit-Bucket", "b1", "X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "4", "X-RateLimit-Scope", "user"), `{"retry_after": 3.9}`,
			rateInfo{bucket: "b1", counted: true, limit: 5, resetAfter: 4 * time.Second, limited: true, wait: 4 * time.Second}},
		{"429 global by header", 429, h("X-RateLimit-Global", "true", "Retry-After", "5"), `{}`, rateInfo{limited: true, wait: 5 * time.Second, global: true}},
		{"429 global by scope", 429, h("X-RateLimit-Scope", "global"), `{"retry_after": 2}`, rateInfo{limited: true, wait: 2 * time.Second, global: true}},
		{"429 global by body", 429, h(), `{"retry_after": 2, "global": true}`, rateInfo{limited: true, wait: 2 * time.Second, global: true}},
		{"429 saying nothing", 429, h(), `not json`, rateInfo{limited: true, wait: time.Second}},
		{"absurd wait", 429, h("Retry-After", "1e12"), ``, rateInfo{limited: true, wait: maxRateWait}},
		{"negative wait", 200, h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "-3"), ``, rateInfo{}},
		{"negative count", 200, h("X-RateLimit-Remaining", "-1", "X-RateLimit-Reset-After", "3"), ``, rateInfo{}},
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

// limiterRun drives a limiter as the transport does, at virtual times.
type limiterRun struct {
	t   *testing.T
	l   *limiter
	now time.Time
}

// send asks for a request on method and path; when admitted, the answer
// carries the headers kv. It returns the refusal, or nil.
func (r *limiterRun) send(method, path string, status int, kv ...string) *channels.RateLimitError {
	r.t.Helper()
	rt := routeOf(method, path)
	tk, err := r.l.acquire(rt, r.now)
	if err != nil {
		var rl *channels.RateLimitError
		if !errors.As(err, &rl) {
			r.t.Fatalf("acquire = %v, want nil or a *channels.RateLimitError", err)
		}
		return rl
	}
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	ri := parseRateLimit(status, h, nil)
	r.l.done(tk, rt, &ri, r.now)
	return nil
}

// discordHeaders are the headers of a response in bucket b with remaining
// of limit requests left, refilling after reset seconds.
func discordHeaders(b string, limit, remaining int, reset string) []string {
	return []string{"X-RateLimit-Bucket", b, "X-RateLimit-Limit", strconv.Itoa(limit),
		"X-RateLimit-Remaining", strconv.Itoa(remaining), "X-RateLimit-Reset-After", reset}
}

// TestLimiterSharedBucket: once the responses say that creating and
// editing messages share a bucket, the edit after five posts waits for
// the bucket instead of drawing a 429, while another channel goes on.
func TestLimiterSharedBucket(t *testing.T) {
	r := &limiterRun{t: t, l: newLimiter(), now: time.Unix(1000, 0)}
	const post, edit = "/api/v9/channels/1/messages", "/api/v9/channels/1/messages/77"
	// Learn the buckets of edits and typing in an earlier window.
	if rl := r.send("PATCH", edit, 200, discordHeaders("msgs", 5, 4, "5")...); rl != nil {
		t.Fatalf("first edit refused: %v", rl)
	}
	if rl := r.send("POST", "/api/v9/channels/1/typing", 200, discordHeaders("typing", 5, 4, "5")...); rl != nil {
		t.Fatalf("first typing call refused: %v", rl)
	}
	r.now = r.now.Add(5 * time.Second)
	for i := range 5 {
		// Discord counts the window down from the first request.
		reset := strconv.FormatFloat(5-0.1*float64(i), 'f', 1, 64)
		if rl := r.send("POST", post, 200, discordHeaders("msgs", 5, 4-i, reset)...); rl != nil {
			t.Fatalf("post %d refused: %v", i+1, rl)
		}
		r.now = r.now.Add(100 * time.Millisecond)
	}
	rl := r.send("PATCH", edit, 200, discordHeaders("msgs", 5, 4, "5")...)
	if rl == nil || rl.Scope != "msgs" || rl.RetryAfter != 4500*time.Millisecond+resetOffset {
		t.Fatalf("edit after five posts = %+v, want a wait of 4.5 s and the offset on bucket msgs", rl)
	}
	if rl := r.send("POST", "/api/v9/channels/2/messages", 200, discordHeaders("msgs", 5, 4, "5")...); rl != nil {
		t.Errorf("post in another channel refused: %v", rl)
	}
	if rl := r.send("POST", "/api/v9/channels/1/typing", 200, discordHeaders("typing", 5, 4, "5")...); rl != nil {
		t.Errorf("typing is another bucket, yet refused: %v", rl)
	}
	r.now = r.now.Add(4500*time.Millisecond + resetOffset)
	if rl := r.send("PATCH", edit, 200, discordHeaders("msgs", 5, 4, "5")...); rl != nil {
		t.Errorf("edit after the reset refused: %v", rl)
	}
}

// TestLimiterUnknownRoute: a route whose bucket is not known yet waits
// while a bucket of its channel is exhausted (it may be the same), and
// not for exhausted buckets of other channels.
func TestLimiterUnknownRoute(t *testing.T) {
	r := &limiterRun{t: t, l: newLimiter(), now: time.Unix(1000, 0)}
	if rl := r.send("POST", "/api/v9/channels/1/messages", 200, discordHeaders("msgs", 5, 0, "3")...); rl != nil {
		t.Fatalf("post refused: %v", rl)
	}
	if rl := r.send("PATCH", "/api/v9/channels/2/messages/5", 200, discordHeaders("msgs", 5, 4, "5")...); rl != nil {
		t.Errorf("first edit in another channel refused: %v", rl)
	}
	// The edit route is known now; a typing call is not.
	rl := r.send("POST", "/api/v9/channels/1/typing", 204, discordHeaders("typing", 5, 4, "5")...)
	if rl == nil || rl.RetryAfter != 3*time.Second+resetOffset {
		t.Fatalf("first typing call in a channel with an exhausted bucket = %+v, want a wait of 3 s and the offset", rl)
	}
	if rl := r.send("POST", "/api/v9/channels/2/typing", 204, discordHeaders("typing", 5, 4, "5")...); rl != nil {
		t.Fatalf("first typing call elsewhere refused: %v", rl)
	}
	// Now typing's bucket is known: it no longer waits for messages.
	if rl := r.send("POST", "/api/v9/channels/1/typing", 204, discordHeaders("typing", 5, 4, "5")...); rl != nil {
		t.Errorf("typing with a known bucket of its own refused: %v", rl)
	}
	if rl := r.send("GET", "/api/v9/gateway", 200); rl != nil {
		t.Errorf("a route without major parameter refused: %v", rl)
	}
}

// TestLimiterBucketChanges: when Discord moves a route to another bucket,
// the route follows it.
func TestLimiterBucketChanges(t *testing.T) {
	r := &limiterRun{t: t, l: newLimiter(), now: time.Unix(1000, 0)}
	const post, edit = "/api/v9/channels/1/messages", "/api/v9/channels/1/messages/9"
	r.send("POST", post, 200, discordHeaders("a", 5, 0, "5")...)
	r.send("PATCH", edit, 200, discordHeaders("a", 5, 0, "5")...)
	if rl := r.send("PATCH", edit, 200); rl == nil {
		t.Fatal("edit in the exhausted bucket a was sent")
	}
	r.now = r.now.Add(5*time.Second + resetOffset)
	// The edit route moved to bucket b, which has room.
	r.send("PATCH", edit, 200, discordHeaders("b", 10, 9, "10")...)
	r.send("POST", post, 200, discordHeaders("a", 5, 0, "5")...)
	if rl := r.send("PATCH", edit, 200, discordHeaders("b", 10, 8, "10")...); rl != nil {
		t.Errorf("edit in bucket b refused while bucket a is exhausted: %v", rl)
	}
	if rl := r.send("POST", post, 200); rl == nil || rl.Scope != "a" {
		t.Errorf("post in exhausted bucket a = %v, want refused", rl)
	}
}

// TestLimiterInFlight: requests sent and not yet answered count against
// the bucket, and the lowest count of answers that come out of order wins.
func TestLimiterInFlight(t *testing.T) {
	l := newLimiter()
	now := time.Unix(1000, 0)
	rt := routeOf("POST", "/api/v9/channels/1/messages")
	h := func(remaining int) *rateInfo {
		return &rateInfo{bucket: "m", counted: true, limit: 5, remaining: remaining, resetAfter: 5 * time.Second}
	}
	tk, err := l.acquire(rt, now)
	if err != nil {
		t.Fatal(err)
	}
	l.done(tk, rt, h(2), now)
	var tickets []ticket
	for range 2 {
		tk, err := l.acquire(rt, now)
		if err != nil {
			t.Fatalf("acquire with room = %v", err)
		}
		tickets = append(tickets, tk)
	}
	if _, err := l.acquire(rt, now); err == nil {
		t.Fatal("a third request was admitted while two of the two left are in flight")
	}
	l.done(tickets[1], rt, h(0), now)
	l.done(tickets[0], rt, h(1), now) // answered last, counted first
	if _, err := l.acquire(rt, now); err == nil {
		t.Error("a request was admitted after an answer said none is left")
	}
	// A request that got no answer is no longer in flight.
	now = now.Add(5*time.Second + resetOffset)
	tk, err = l.acquire(rt, now)
	if err != nil {
		t.Fatalf("acquire after the reset = %v", err)
	}
	l.done(tk, rt, nil, now)
	if b := l.buckets[bucketKey{"m", "channels/1"}]; b.inflight != 0 {
		t.Errorf("in flight = %d after every request ended", b.inflight)
	}
}

// TestLimiter429: a 429 exhausts its bucket for the wait it names; a
// global one holds every request.
func TestLimiter429(t *testing.T) {
	r := &limiterRun{t: t, l: newLimiter(), now: time.Unix(1000, 0)}
	const post = "/api/v9/channels/1/messages"
	if rl := r.send("POST", post, 429, "X-RateLimit-Bucket", "m", "Retry-After", "2"); rl != nil {
		t.Fatal(rl)
	}
	r.now = r.now.Add(500 * time.Millisecond)
	if rl := r.send("POST", post, 200); rl == nil || rl.RetryAfter != 1500*time.Millisecond {
		t.Errorf("post after a 429 = %+v, want a wait of 1.5 s", rl)
	}
	r.now = r.now.Add(1500 * time.Millisecond)
	if rl := r.send("POST", post, 429, "X-RateLimit-Global", "true", "Retry-After", "10"); rl != nil {
		t.Fatal(rl)
	}
	r.now = r.now.Add(time.Second)
	for _, path := range []string{post, "/api/v9/channels/2/typing", "/api/v9/gateway"} {
		if rl := r.send("POST", path, 200); rl == nil || rl.Scope != "global" || rl.RetryAfter != 9*time.Second {
			t.Errorf("request to %s during a global limit = %+v, want a global wait of 9 s", path, rl)
		}
	}
	r.now = r.now.Add(9 * time.Second)
	if rl := r.send("POST", post, 200); rl != nil {
		t.Errorf("post after the global limit = %v", rl)
	}
}

// TestLimiterBounded: the limiter's maps stay bounded however many
// channels and routes it sees.
func TestLimiterBounded(t *testing.T) {
	r := &limiterRun{t: t, l: newLimiter(), now: time.Unix(1000, 0)}
	for i := range maxBuckets + 10 {
		r.send("POST", "/api/v9/channels/"+strconv.Itoa(i+1)+"/messages", 200, discordHeaders("m", 5, 0, "5")...)
	}
	for i := range maxRoutes + 10 {
		r.send("GET", "/api/v9/x"+strconv.Itoa(i), 200, "X-RateLimit-Bucket", "b"+strconv.Itoa(i))
	}
	if n := len(r.l.buckets); n > maxBuckets {
		t.Errorf("%d buckets remembered, want at most %d", n, maxBuckets)
	}
	if n := len(r.l.routes); n > maxRoutes {
		t.Errorf("%d routes remembered, want at most %d", n, maxRoutes)
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

// TestLimiterWaitsAMarginPastTheReset: a window ends resetOffset after
// the moment Discord announced, which it counts from its own receipt of
// the first request: a request sent at that very moment by our clock
// could still fall into it (a 429 at the boundary).
func TestLimiterWaitsAMarginPastTheReset(t *testing.T) {
	l := newLimiter()
	now := time.Unix(1000, 0)
	rt := routeOf("POST", "/api/v9/channels/1/messages")
	tk, err := l.acquire(rt, now)
	if err != nil {
		t.Fatal(err)
	}
	l.done(tk, rt, &rateInfo{bucket: "m", counted: true, limit: 5, remaining: 0, resetAfter: 5 * time.Second}, now)
	_, err = l.acquire(rt, now.Add(5*time.Second))
	if rl := (*channels.RateLimitError)(nil); !errors.As(err, &rl) || rl.RetryAfter != resetOffset {
		t.Fatalf("at the announced reset: %v, want a wait of %v", err, resetOffset)
	}
	if _, err := l.acquire(rt, now.Add(5*time.Second+resetOffset)); err != nil {
		t.Errorf("after the margin: %v", err)
	}
}
