package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
)

// apiHost is the host of every endpoint discordgo computes at init.
const apiHost = "discord.com"

// transport sends discordgo's REST requests to the configured base URL and
// keeps Discord's rate-limit bookkeeping out of discordgo, whose limiter
// would otherwise sleep before a request to an exhausted bucket. It reads
// the X-RateLimit headers itself, removes them from the response, and
// fails a request to a bucket known to be exhausted with
// *channels.RateLimitError before anything is sent.
type transport struct {
	base   *url.URL // scheme, host and optional path prefix
	next   http.RoundTripper
	limits *limiter
	// fallback returns the context for requests that carry none (discordgo
	// fetches the gateway URL with context.Background): Run's context, so
	// that its end cancels them.
	fallback func() context.Context
}

// RoundTrip implements http.RoundTripper. It refuses every host but the
// Discord API's, so nothing leaves for discord.com when the base URL points
// elsewhere.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != apiHost {
		closeBody(req)
		return nil, fmt.Errorf("discord: refusing a request to %q: the adapter only talks to the Discord API", req.URL.Host)
	}
	route := routeKey(req.Method, req.URL.Path)
	if err := t.limits.check(route, time.Now()); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	if ctx.Done() == nil && t.fallback != nil {
		ctx = t.fallback()
	}
	out := req.Clone(ctx)
	prefix := strings.TrimSuffix(t.base.Path, "/")
	out.URL.Scheme = t.base.Scheme
	out.URL.Host = t.base.Host
	out.URL.Path = prefix + req.URL.Path
	if req.URL.RawPath != "" {
		out.URL.RawPath = strings.TrimSuffix(t.base.EscapedPath(), "/") + req.URL.RawPath
	}
	out.Host = ""
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	var body []byte
	if resp.StatusCode == http.StatusTooManyRequests {
		// The body says whether the limit is global and whether it is
		// the per-message edit limit (30046), which must not hold up
		// other edits. It is small; put it back for discordgo.
		body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("discord: reading a 429 response: %w", err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if msg, ok := oldEditLimit(body); ok {
			return nil, fmt.Errorf("%w: %s", errOldMessageEdits, msg)
		}
	}
	t.limits.observe(route, parseRateLimit(resp.StatusCode, resp.Header, body), time.Now())
	for k := range resp.Header {
		if strings.HasPrefix(k, "X-Ratelimit-") {
			delete(resp.Header, k)
		}
	}
	return resp, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// routeKey names the rate-limit bucket of a request the way Discord
// scopes them: by method and route, keeping the major parameters (the
// channel, guild or webhook id) and folding other ids, so that edits of
// two messages in one channel share a key.
func routeKey(method, path string) string {
	if rest, ok := strings.CutPrefix(path, "/api/v"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			path = rest[i:]
		}
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if i > 0 {
			switch segs[i-1] {
			case "channels", "guilds", "webhooks":
				continue
			}
		}
		if isSnowflake(s) {
			segs[i] = "{id}"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

// isSnowflake reports whether s looks like a Discord id: only digits.
func isSnowflake(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// rateInfo is what one response says about its bucket.
type rateInfo struct {
	// wait is how long the bucket (or, with global, every request) must
	// rest; 0 means the bucket has requests left.
	wait   time.Duration
	global bool
}

// maxRateWait caps a wait read from headers, against nonsense values.
const maxRateWait = time.Hour

// tooMany is the JSON body of a 429.
type tooMany struct {
	Message    string  `json:"message"`
	Code       int     `json:"code"`
	RetryAfter float64 `json:"retry_after"`
	Global     bool    `json:"global"`
}

// errOldMessageEdits is Discord's limit of edits to messages older than an
// hour (30046). It arrives as a 429 but concerns one message, not a
// bucket: the transport reports it as this error instead, and the adapter
// as channels.ErrMessageGone, so dispatch posts anew.
var errOldMessageEdits = errors.New("too many edits of a message older than an hour (30046)")

// oldEditLimit reports whether a 429's body is the 30046 limit, and its
// message.
func oldEditLimit(body []byte) (string, bool) {
	var tm tooMany
	if json.Unmarshal(body, &tm) != nil {
		return "", false
	}
	return tm.Message, tm.Code == codeOldMessageEdits || isOldEditText(tm.Message)
}

// parseRateLimit reads what a response says about its bucket: the
// X-RateLimit-Remaining and -Reset-After headers, and for a 429 also
// X-RateLimit-Global or -Scope "global", Retry-After and the JSON body.
func parseRateLimit(status int, h http.Header, body []byte) rateInfo {
	resetAfter, hasReset := parseSeconds(h.Get("X-RateLimit-Reset-After"))
	retryAfter, hasRetry := parseSeconds(h.Get("Retry-After"))
	if status == http.StatusTooManyRequests {
		var tm tooMany
		_ = json.Unmarshal(body, &tm) // a body that is not JSON says nothing more
		if d, ok := seconds(tm.RetryAfter); ok && d > 0 {
			retryAfter, hasRetry = max(retryAfter, d), true
		}
		wait := max(resetAfter, retryAfter)
		if !hasReset && !hasRetry {
			wait = time.Second
		}
		global := tm.Global || strings.EqualFold(h.Get("X-RateLimit-Global"), "true") || strings.EqualFold(h.Get("X-RateLimit-Scope"), "global")
		return rateInfo{wait: wait, global: global}
	}
	if h.Get("X-RateLimit-Remaining") == "0" && hasReset {
		return rateInfo{wait: resetAfter}
	}
	return rateInfo{}
}

// parseSeconds parses a non-negative number of seconds ("1.25"), capped
// at maxRateWait.
func parseSeconds(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, false
	}
	return seconds(f)
}

// seconds converts a non-negative number of seconds to a duration capped
// at maxRateWait.
func seconds(f float64) (time.Duration, bool) {
	if math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f > maxRateWait.Seconds() {
		return maxRateWait, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// limiter remembers which buckets Discord reported exhausted and until
// when. It only holds exhausted buckets, which expire, so it stays small.
type limiter struct {
	mu      sync.Mutex           // guards the fields below
	blocked map[string]time.Time // route → when it has requests again
	global  time.Time            // every request waits until then
}

// maxBlocked bounds the number of remembered buckets.
const maxBlocked = 4096

func newLimiter() *limiter { return &limiter{blocked: map[string]time.Time{}} }

// check returns a *channels.RateLimitError when a request on route must
// not be sent at now. It does not block.
func (l *limiter) check(route string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.global) {
		return &channels.RateLimitError{RetryAfter: l.global.Sub(now), Scope: "global"}
	}
	until, ok := l.blocked[route]
	if !ok {
		return nil
	}
	if now.Before(until) {
		return &channels.RateLimitError{RetryAfter: until.Sub(now), Scope: route}
	}
	delete(l.blocked, route)
	return nil
}

// observe records what a response on route said about its bucket.
func (l *limiter) observe(route string, ri rateInfo, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case ri.wait <= 0:
		delete(l.blocked, route)
	case ri.global:
		if until := now.Add(ri.wait); until.After(l.global) {
			l.global = until
		}
	default:
		if len(l.blocked) >= maxBlocked {
			for k, until := range l.blocked {
				if !now.Before(until) {
					delete(l.blocked, k)
				}
			}
			if len(l.blocked) >= maxBlocked {
				clear(l.blocked) // at worst one more 429
			}
		}
		l.blocked[route] = now.Add(ri.wait)
	}
}
