package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiHost is the host of every endpoint discordgo computes at init.
const apiHost = "discord.com"

// transport sends discordgo's REST requests to the configured base URL and
// keeps Discord's rate-limit bookkeeping out of discordgo, whose limiter
// keys buckets by URL and would sleep before a request to an exhausted
// one. It reads the X-RateLimit headers itself into its limiter (see
// ratelimit.go), removes them from the response, and fails a request that
// the limits do not allow now with *channels.RateLimitError before
// anything is sent.
type transport struct {
	base   *url.URL // scheme, host and optional path prefix
	next   http.RoundTripper
	limits *limiter
	// now reads the clock for the limiter; tests give a virtual one.
	now func() time.Time
	// fallback returns the context for requests that carry none (discordgo
	// fetches the gateway URL with context.Background): Run's context, so
	// that its end cancels them.
	fallback func() context.Context
	// gateway, if set, may answer the gateway lookup (GET
	// /api/v9/gateway) itself: with the session's resume URL (see
	// resumeURL).
	gateway func() (string, bool)
}

// RoundTrip implements http.RoundTripper. It refuses every host but the
// Discord API's, so nothing leaves for discord.com when the base URL points
// elsewhere.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != apiHost {
		closeBody(req)
		return nil, fmt.Errorf("discord: refusing a request to %q: the adapter only talks to the Discord API", req.URL.Host)
	}
	if t.gateway != nil && req.Method == http.MethodGet && req.URL.Path == "/api/v9/gateway" {
		if u, ok := t.gateway(); ok {
			closeBody(req)
			return gatewayAnswer(req, u), nil
		}
	}
	r := routeOf(req.Method, req.URL.Path)
	tk, err := t.limits.acquire(r, t.now())
	if err != nil {
		closeBody(req)
		return nil, err
	}
	admitted(req.Context())
	resp, err := t.send(req)
	if err != nil {
		t.limits.done(tk, r, nil, t.now())
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
			t.limits.done(tk, r, nil, t.now())
			return nil, fmt.Errorf("discord: reading a 429 response: %w", err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if msg, ok := oldEditLimit(body); ok {
			t.limits.done(tk, r, nil, t.now())
			return nil, fmt.Errorf("%w: %s", errOldMessageEdits, msg)
		}
	}
	ri := parseRateLimit(resp.StatusCode, resp.Header, body)
	t.limits.done(tk, r, &ri, t.now())
	for k := range resp.Header {
		if strings.HasPrefix(k, "X-Ratelimit-") {
			delete(resp.Header, k)
		}
	}
	return resp, nil
}

// send sends req to the base URL.
func (t *transport) send(req *http.Request) (*http.Response, error) {
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
	return t.next.RoundTrip(out)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
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
