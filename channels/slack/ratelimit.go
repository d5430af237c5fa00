package slack

import (
	"cmp"
	"net/http"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Slack limits each Web API method per app and workspace by its tier:
// about 1 call a minute (Tier 1), 20 (Tier 2), 50 (Tier 3) or 100 (Tier
// 4), with short bursts; chat.postMessage is paced per channel instead
// (pace). Slack says so only with a 429 and its Retry-After. A burst of
// mentions (a team asking at once) needs more calls of some methods than
// a minute allows — chat.startStream, Tier 2, opens each answer — and a
// 429 that is sent is a call lost and a warning from Slack. So the
// adapter counts each limited method's calls itself (tierLine: a bucket
// of a minute's calls, refilled at the tier's rate) and refuses the call
// that would exceed it with *channels.RateLimitError before anything is
// sent: dispatch waits it out, as it does a 429. The threads that wait
// for a method keep their order: one refused is queued and told when its
// turn is, so that a thread retrying at the first instant cannot starve
// the others. A 429 that comes anyway (another process of the same app
// spent the budget) teaches: the method's bucket is empty until its
// Retry-After, and refills from there. Since that budget is unknown
// until Slack has answered a call, a method's first call for a thread
// (since start, and since each 429) goes alone: the other threads wait
// in line until Slack answered it (probe), so that a burst that meets
// a spent budget meets it once, not once per call then in flight.

// tier is a method's allowance: perMinute calls a minute, of which burst
// may go at once.
type tier struct {
	perMinute int
	burst     int
}

// Slack's tiers, with a burst of a minute's calls but for Tier 4's.
var (
	tier2 = tier{perMinute: 20, burst: 20}
	tier3 = tier{perMinute: 50, burst: 50}
	tier4 = tier{perMinute: 100, burst: 100}
)

// methodTiers are the tiers of the limited methods the adapter calls on
// a thread's behalf (Slack's reference for each method). Others —
// auth.test, apps.connections.open, conversations.replies (its own
// pacing), the files methods — are rare enough.
var methodTiers = map[string]tier{
	"chat.startStream":            tier2,
	"chat.stopStream":             tier2,
	"chat.appendStream":           tier4,
	"chat.update":                 tier3,
	"chat.postEphemeral":          tier4,
	"assistant.threads.setStatus": tier3,
	"agents.sessions.setStatus":   tier3,
	"users.info":                  tier4,
}

// tierLine is one method's count: the calls left (tokens, refilled at
// the tier's rate since at) and the threads waiting for one, in turn.
type tierLine struct {
	tier   tier
	tokens float64
	at     time.Time
	queue  []paceWaiter
	// held are calls taken and kept for a caller that could not make
	// its call yet (hold), until when.
	held map[string]time.Time
	// known is whether Slack answered a call of the method without a
	// 429 since start or since its last 429; until then one call at a
	// time goes (probe), prober's, which is in flight until proberUntil
	// at the latest (a call whose answer is never seen).
	known       bool
	prober      string
	proberUntil time.Time
}

// margin is the part of a call a line counts beyond what it earned
// before it lets one go: the line and Slack refill at their own instants,
// and their counts, in floating point, can differ by a rounding at the
// exact instant a call is earned; the margin makes the line the later.
const margin = 1e-6

// probeWait is how long a thread waits before it asks again while
// another's call finds out whether a method's budget is spent.
const probeWait = 200 * time.Millisecond

// probeFor bounds how long a call in flight keeps the others waiting:
// the Web API client's timeout.
const probeFor = httpTimeout

// limits is the adapter's book of the methods' tiers. It is safe for
// concurrent use.
type limits struct {
	// minute is the tiers' window: a minute (tests shorten it).
	minute time.Duration

	mu    sync.Mutex // guards lines
	lines map[string]*tierLine
}

func newLimits() *limits {
	return &limits{minute: time.Minute, lines: map[string]*tierLine{}}
}

// interval is the time a line takes to earn one call.
func (l *limits) interval(t tier) time.Duration {
	return l.minute / time.Duration(t.perMinute)
}

// lineLocked returns method's line at now, refilled; nil for a method
// without a tier.
func (l *limits) lineLocked(method string, now time.Time) *tierLine {
	t, ok := methodTiers[method]
	if !ok {
		return nil
	}
	ln := l.lines[method]
	if ln == nil {
		ln = &tierLine{tier: t, tokens: float64(t.burst), at: now}
		l.lines[method] = ln
	}
	if now.After(ln.at) {
		ln.tokens = min(float64(t.burst), ln.tokens+float64(now.Sub(ln.at))/float64(l.interval(t)))
		ln.at = now
	}
	return ln
}

// take reserves a call of method at now for who (a thread: its
// channel/ts; "" for a call no thread waits for, which never queues),
// or returns a *channels.RateLimitError saying when its turn is, and how
// many callers are ahead of it in the line. It never sleeps.
func (l *limits) take(method, who string, now time.Time) (ahead int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lineLocked(method, now)
	if ln == nil {
		return 0, nil
	}
	every := l.interval(ln.tier)
	if _, ok := ln.held[who]; ok && who != "" {
		delete(ln.held, who)
		return 0, nil
	}
	for w, until := range ln.held {
		if now.After(until) {
			delete(ln.held, w)
			ln.tokens = min(float64(ln.tier.burst), ln.tokens+1)
		}
	}
	ln.queue = slices.DeleteFunc(ln.queue, func(w paceWaiter) bool { return w.who != who && now.After(w.until) })
	at := -1
	if who != "" {
		at = slices.IndexFunc(ln.queue, func(w paceWaiter) bool { return w.who == who })
	}
	probing := who != "" && ln.prober != "" && now.Before(ln.proberUntil)
	// It goes when the calls left are enough for it and those ahead, and
	// no other thread's call is finding out whether they are.
	if p := cmp.Or(at+1, len(ln.queue)+1); ln.tokens >= float64(p)+margin && !probing {
		if at >= 0 {
			ln.queue = slices.Delete(ln.queue, at, at+1)
		}
		ln.tokens--
		if !ln.known && who != "" {
			ln.prober, ln.proberUntil = who, now.Add(probeFor)
		}
		return 0, nil
	}
	// The turn: once the calls of those ahead and this one are earned.
	n := at
	if n < 0 {
		n = len(ln.queue)
	}
	// A line that learned from a 429 earns nothing until ln.at.
	wait := max(ln.at.Sub(now), 0)
	if need := float64(n+1) + margin - ln.tokens; need > 0 {
		wait += time.Duration(need * float64(every))
	}
	if probing {
		wait = max(wait, probeWait)
	}
	if who != "" {
		if at < 0 {
			ln.queue = append(ln.queue, paceWaiter{who: who})
			at = len(ln.queue) - 1
		}
		ln.queue[at].until = now.Add(wait + every)
	}
	return n, &channels.RateLimitError{RetryAfter: max(wait, time.Millisecond), Scope: method + " (tier pacing)"}
}

// hold keeps the call of method that take gave who and that who could
// not make yet (another limit held it back for wait): who's next take
// gets it at once, within wait and an interval; after that it goes back
// to the line.
func (l *limits) hold(method, who string, wait time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lineLocked(method, now)
	if ln == nil {
		return
	}
	if ln.prober == who {
		ln.prober = "" // its call is not made: the next one finds out
	}
	if who == "" || len(ln.held) >= maxHeld {
		ln.tokens = min(float64(ln.tier.burst), ln.tokens+1)
		return
	}
	if ln.held == nil {
		ln.held = map[string]time.Time{}
	}
	ln.held[who] = now.Add(wait + l.interval(ln.tier))
}

// maxHeld bounds the calls a line holds for callers.
const maxHeld = 10000

// learn records a 429 of method at now: nothing more may go until
// retryAfter has passed, and the count starts again from there.
func (l *limits) learn(method string, retryAfter time.Duration, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lineLocked(method, now)
	if ln == nil {
		return
	}
	// One call is earned exactly when retryAfter ends. The calls held
	// for callers were counted from a budget that was not there: they go
	// back to the line, and the next call since finds out again.
	ln.tokens = 0
	clear(ln.held)
	ln.known, ln.prober = false, ""
	ln.at = now.Add(retryAfter - l.interval(ln.tier))
	if ln.at.Before(now) {
		ln.tokens = float64(now.Sub(ln.at)) / float64(l.interval(ln.tier))
		ln.at = now
	}
}

// answered records that Slack answered a call of method (ok: not with a
// 429, which learn records), or that the call failed without an answer:
// the call in flight, if it was the one finding out the method's budget,
// is over, and an answer that was not a 429 shows the budget is there.
func (l *limits) answered(method string, ok bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lineLocked(method, now)
	if ln == nil {
		return
	}
	if ok {
		ln.known = true
	}
	ln.prober = ""
}

// tierTransport tells the adapter's limits how Slack answered each Web
// API call (limits.answered): the method is the last part of the path.
type tierTransport struct {
	base   http.RoundTripper
	limits *limits
}

func (t tierTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := path.Base(req.URL.Path)
	resp, err := t.base.RoundTrip(req)
	switch {
	case err != nil:
		t.limits.answered(method, false, time.Now())
	case resp.StatusCode != http.StatusTooManyRequests:
		t.limits.answered(method, true, time.Now())
	default:
		// A 429: the call's error teaches the line (learn), which ends
		// the probe; until then nothing else goes.
	}
	return resp, err
}
