package discord

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Discord counts requests in buckets it names in each response
// (X-RateLimit-Bucket). Several routes may share a bucket — creating and
// editing messages do — and a bucket is counted apart per major parameter:
// the channel, guild or webhook (with its token) the request is about. The
// limiter learns which bucket each route belongs to from the responses,
// counts the requests left in each bucket and major parameter, and refuses
// a request that would exceed them with *channels.RateLimitError before
// anything is sent. It never waits: dispatch decides when to try again.
//
// A route whose bucket is not known yet (its first request since the
// start) might share a bucket with another route: while a bucket of the
// same major parameter is exhausted, such a request is refused too, for
// as long as that bucket needs. This costs at most one wait per route and
// process, where sending would cost a 429. Nor is more than one request
// of such a route in flight: the first one's answer teaches its bucket
// and how many requests it takes, where a burst sent before any answer
// (a hundred mentions, each opening a thread) would spend the bucket and
// draw a 429 for each request beyond it.
//
// Discord also limits a bot to 50 requests a second over all routes but
// the interactions' (globalLimit), and says so only with a 429 that stops
// every request: the limiter counts the requests of the last second
// itself and refuses the 51st.

// route is what the rate limits of a request depend on: its template, the
// same for every request of its kind, and its major parameter.
type route struct {
	// template is the method and path with every id folded:
	// "PATCH /channels/{channel}/messages/{id}".
	template string
	// major names the resource the bucket is counted for
	// ("channels/123", "webhooks/9/token"); "" when the route has none.
	major string
}

// routeOf returns the route of a request to path (with or without the
// "/api/vN" prefix).
func routeOf(method, path string) route {
	if rest, ok := strings.CutPrefix(path, "/api/v"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			path = rest[i:]
		}
	}
	orig := strings.Split(path, "/")
	segs := slices.Clone(orig)
	var major string
	for i, s := range orig {
		var prev, prev2 string
		if i > 0 {
			prev = orig[i-1]
		}
		if i > 1 {
			prev2 = orig[i-2]
		}
		switch {
		case (prev == "channels" || prev == "guilds" || prev == "webhooks" || prev == "interactions") && isSnowflake(s):
			if major == "" {
				major = prev + "/" + s
			}
			segs[i] = "{" + strings.TrimSuffix(prev, "s") + "}"
		case (prev2 == "webhooks" || prev2 == "interactions") && isSnowflake(prev) && s != "":
			// A webhook's or an interaction's token.
			if major == prev2+"/"+prev {
				major += "/" + s
			}
			segs[i] = "{token}"
		case prev == "reactions" && s != "":
			segs[i] = "{emoji}" // one bucket for every emoji
		case isSnowflake(s):
			segs[i] = "{id}"
		}
	}
	return route{template: method + " " + strings.Join(segs, "/"), major: major}
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

// rateInfo is what one response says about rate limits.
type rateInfo struct {
	// bucket is the X-RateLimit-Bucket of the route, "" when not given.
	bucket string
	// counted is set when the response says how many requests are left
	// (X-RateLimit-Remaining) and when the bucket refills
	// (X-RateLimit-Reset-After); then limit, remaining and resetAfter
	// hold them (limit is 0 when X-RateLimit-Limit is missing).
	counted    bool
	limit      int
	remaining  int
	resetAfter time.Duration
	// limited is set for a 429: nothing may be sent for wait, on this
	// bucket or, with global, at all.
	limited bool
	wait    time.Duration
	global  bool
}

// maxRateWait caps a wait read from headers, against nonsense values.
const maxRateWait = time.Hour

// maxBucketID bounds the length of a bucket id kept from a header.
const maxBucketID = 128

// tooMany is the JSON body of a 429.
type tooMany struct {
	Message    string  `json:"message"`
	Code       int     `json:"code"`
	RetryAfter float64 `json:"retry_after"`
	Global     bool    `json:"global"`
}

// parseRateLimit reads what a response says about rate limits: the
// X-RateLimit-Bucket, -Limit, -Remaining and -Reset-After headers, and for
// a 429 also X-RateLimit-Global or -Scope "global", Retry-After and the
// JSON body.
func parseRateLimit(status int, h http.Header, body []byte) rateInfo {
	var ri rateInfo
	if b := strings.TrimSpace(h.Get("X-RateLimit-Bucket")); b != "" && len(b) <= maxBucketID {
		ri.bucket = b
	}
	resetAfter, hasReset := parseSeconds(h.Get("X-RateLimit-Reset-After"))
	remaining, hasRemaining := parseCount(h.Get("X-RateLimit-Remaining"))
	if hasReset && hasRemaining {
		ri.counted, ri.remaining, ri.resetAfter = true, remaining, resetAfter
		ri.limit, _ = parseCount(h.Get("X-RateLimit-Limit"))
	}
	if status != http.StatusTooManyRequests {
		return ri
	}
	retryAfter, hasRetry := parseSeconds(h.Get("Retry-After"))
	var tm tooMany
	_ = json.Unmarshal(body, &tm) // a body that is not JSON says nothing more
	if d, ok := seconds(tm.RetryAfter); ok && d > 0 {
		retryAfter, hasRetry = max(retryAfter, d), true
	}
	ri.limited = true
	ri.wait = max(resetAfter, retryAfter)
	if !hasReset && !hasRetry {
		ri.wait = time.Second
	}
	ri.global = tm.Global || strings.EqualFold(h.Get("X-RateLimit-Global"), "true") || strings.EqualFold(h.Get("X-RateLimit-Scope"), "global")
	return ri
}

// parseCount parses a non-negative request count.
func parseCount(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
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

// resetOffset is added to the end of every window Discord announces:
// Discord counts a window from its own receipt of the first request and
// says when it ends to the millisecond, so a request sent the instant
// the window ends by our clock can still fall into it (a 429 at the
// boundary, seen in the cluster harness). Other clients wait a similar
// margin (discord.js's restTimeOffset, 50 ms by default).
const resetOffset = 50 * time.Millisecond

// bucketKey names one counter: a bucket (Discord's id, or the route's
// template while its bucket is unknown) for one major parameter.
type bucketKey struct {
	bucket string
	major  string
}

// bucket is the count of one bucketKey.
type bucket struct {
	limit     int       // requests per window, 0 when unknown
	remaining int       // requests left in the window, as Discord last said
	reset     time.Time // when the window ends; zero when not known
	inflight  int       // requests sent and not answered yet
}

// exhaustedLocked returns how long b has no request left at now, or 0.
// Once a window has ended, the new one's end is not known until the
// answer to its first request says it: until then the requests in
// flight count against the limit, and one beyond it waits about a round
// trip (probeWait).
func (b *bucket) exhaustedLocked(now time.Time) time.Duration {
	if b.remaining-b.inflight > 0 {
		return 0
	}
	if b.reset.IsZero() {
		if b.limit == 0 {
			return 0 // nothing known to count against
		}
		return probeWait
	}
	if !now.Before(b.reset) {
		return 0
	}
	return b.reset.Sub(now)
}

// refreshLocked starts a new window once the last one ended: Discord
// counts from the limit again, and says when the new window ends in the
// next response.
func (b *bucket) refreshLocked(now time.Time) {
	if !b.reset.IsZero() && !now.Before(b.reset) {
		b.remaining = max(b.limit, 1)
		b.reset = time.Time{}
	}
}

// Discord's global limit: globalLimit requests in any second, for every
// route but the interactions'. The window is widened by resetOffset, as
// the buckets' are: Discord counts a second from its own receipt.
const (
	globalLimit  = 50
	globalWindow = time.Second + resetOffset
)

// probeWait is how long a request waits while the first request of its
// route, whose bucket is not known yet, is in flight: about a round trip.
// The limiter's changes (changed) end the wait sooner.
const probeWait = 100 * time.Millisecond

// limiter is the adapter's book of Discord's rate limits; see the comment
// at the top of this file. It is safe for concurrent use.
type limiter struct {
	mu      sync.Mutex            // guards the fields below
	routes  map[string]string     // route template → bucket id
	buckets map[bucketKey]*bucket // the counts
	global  time.Time             // every request waits until then
	// sent holds when the last globalLimit requests subject to the
	// global limit were admitted: a ring, next is the oldest.
	sent [globalLimit]time.Time
	next int
	// probing counts the requests in flight of each route template
	// whose bucket is not known yet.
	probing map[string]int
	// change is closed and replaced whenever a request is answered,
	// which may let a refused one through (changed).
	change chan struct{}
}

// Bounds of the limiter's maps. Routes are few (the adapter uses about
// ten); buckets grow with the channels written to and are pruned once
// their windows end.
const (
	maxRoutes  = 1024
	maxBuckets = 4096
)

func newLimiter() *limiter {
	return &limiter{routes: map[string]string{}, buckets: map[bucketKey]*bucket{}, probing: map[string]int{}, change: make(chan struct{})}
}

// changed returns a channel closed once a request is answered after the
// call: a request refused before may be admitted then.
func (l *limiter) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.change
}

// ticket is a request admitted by acquire; pass it to done.
type ticket struct {
	b *bucket // counted as in flight; nil when none
	// probe is the template of the route whose bucket the request is
	// to teach; "" when known.
	probe string
}

// globalExempt reports whether r is outside the global limit: the
// interactions' endpoints (a callback, and the follow-ups and edits of
// the webhook of its token).
func globalExempt(r route) bool {
	return strings.HasPrefix(r.major, "interactions/") || strings.HasPrefix(r.major, "webhooks/")
}

// keyLocked returns the counter of r and whether r's bucket is known.
func (l *limiter) keyLocked(r route) (bucketKey, bool) {
	if id, ok := l.routes[r.template]; ok {
		return bucketKey{bucket: id, major: r.major}, true
	}
	return bucketKey{bucket: "route " + r.template, major: r.major}, false
}

// acquire returns a *channels.RateLimitError when a request on r must not
// be sent at now; otherwise it counts the request as in flight until done.
// It does not block.
func (l *limiter) acquire(r route, now time.Time) (ticket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	exempt := globalExempt(r)
	if !exempt && now.Before(l.global) {
		return ticket{}, &channels.RateLimitError{RetryAfter: l.global.Sub(now), Scope: "global"}
	}
	if oldest := l.sent[l.next]; !exempt && !oldest.IsZero() && now.Before(oldest.Add(globalWindow)) {
		return ticket{}, &channels.RateLimitError{RetryAfter: oldest.Add(globalWindow).Sub(now), Scope: "global"}
	}
	key, known := l.keyLocked(r)
	b := l.buckets[key]
	if b != nil {
		b.refreshLocked(now)
		if wait := b.exhaustedLocked(now); wait > 0 {
			return ticket{}, &channels.RateLimitError{RetryAfter: wait, Scope: key.bucket}
		}
	}
	if !known && r.major != "" {
		// Perhaps r shares an exhausted bucket of its resource.
		var wait time.Duration
		for k, o := range l.buckets {
			if k.major == r.major {
				wait = max(wait, o.exhaustedLocked(now))
			}
		}
		if wait > 0 {
			return ticket{}, &channels.RateLimitError{RetryAfter: wait, Scope: key.bucket}
		}
	}
	var tk ticket
	if !known && !exempt {
		// One request teaches the bucket. Not for an interaction's
		// answer: it must go within 3 s, and each interaction's token
		// is a bucket of its own.
		if l.probing[r.template] > 0 {
			return ticket{}, &channels.RateLimitError{RetryAfter: probeWait, Scope: key.bucket}
		}
		l.probing[r.template]++
		tk.probe = r.template
	}
	if !exempt {
		l.sent[l.next] = now
		l.next = (l.next + 1) % globalLimit
	}
	if b != nil {
		b.inflight++
		tk.b = b
	}
	return tk, nil
}

// done records what the response to a request admitted with tk said; ri
// is nil when no response came.
func (l *limiter) done(tk ticket, r route, ri *rateInfo, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.change)
	l.change = make(chan struct{})
	if tk.b != nil {
		tk.b.inflight--
	}
	if tk.probe != "" {
		if l.probing[tk.probe]--; l.probing[tk.probe] <= 0 {
			delete(l.probing, tk.probe)
		}
	}
	if ri == nil {
		return
	}
	if _, known := l.routes[r.template]; !known && ri.bucket == "" {
		// Discord names no bucket for the route: it shares none.
		ri.bucket = "route " + r.template
	}
	if ri.limited && ri.global {
		if until := now.Add(ri.wait); until.After(l.global) {
			l.global = until
		}
		return
	}
	if ri.bucket != "" && l.routes[r.template] != ri.bucket {
		if len(l.routes) >= maxRoutes {
			clear(l.routes) // at worst one more 429 per route
		}
		l.routes[r.template] = ri.bucket
	}
	if !ri.counted && !ri.limited {
		return
	}
	key, _ := l.keyLocked(r)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{}
		l.addLocked(key, b, now)
	}
	b.refreshLocked(now)
	if ri.counted {
		b.limit = ri.limit
		reset := now.Add(ri.resetAfter + resetOffset)
		if b.reset.IsZero() {
			b.remaining, b.reset = ri.remaining, reset
		} else {
			// The same window: answers may come out of order, so
			// the lowest count and the latest end are the truth.
			b.remaining = min(b.remaining, ri.remaining)
			b.reset = later(b.reset, reset)
		}
	}
	if ri.limited {
		b.remaining = 0
		b.reset = later(b.reset, now.Add(ri.wait))
	}
}

// addLocked adds b under key, first dropping counters that say nothing
// any more when the map is full.
func (l *limiter) addLocked(key bucketKey, b *bucket, now time.Time) {
	if len(l.buckets) >= maxBuckets {
		for k, o := range l.buckets {
			if o.inflight == 0 && (o.reset.IsZero() || !now.Before(o.reset)) {
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= maxBuckets {
			clear(l.buckets) // at worst one more 429 per bucket
		}
	}
	l.buckets[key] = b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
