package discord

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// With rate limits switched on (limitRates), the fake counts requests as
// Discord does: in buckets that it names in
// every response (X-RateLimit-Bucket), per major parameter (here the
// channel), in windows that start with a bucket's first request. Creating
// and editing messages share one bucket, as on Discord, so an edit counts
// against the posts of its channel. A request beyond a bucket's limit gets
// a 429 with Discord's headers and body.

// fakeBucket is one of the fake's rate-limit buckets.
type fakeBucket struct {
	id     string // the X-RateLimit-Bucket, an opaque hash as on Discord
	limit  int
	window time.Duration
}

// The fake's buckets, with the limits commonly observed on Discord.
var (
	fakeMessagesBucket = fakeBucket{id: "80c17d2f203122d936070c88c8d10f33", limit: 5, window: 5 * time.Second}
	fakeTypingBucket   = fakeBucket{id: "4bd1e2f5c9b0a7d3e6f8a1c2b3d4e5f6", limit: 5, window: 5 * time.Second}
	// Reactions: one per quarter second and channel, whatever the emoji.
	fakeReactionsBucket = fakeBucket{id: "5c2f0e9a8b7d6c5e4f3a2b1c0d9e8f7a", limit: 1, window: 250 * time.Millisecond}
	// Threads started from messages, per parent channel. Discord does
	// not document this bucket; the fake's is tighter than the global
	// limit, so that a burst of mentions in one channel exhausts it.
	fakeThreadsBucket = fakeBucket{id: "9e1d3c5b7a9f8e7d6c5b4a3f2e1d0c9b", limit: 25, window: time.Second}
)

// fakeGlobalLimit is Discord's global limit of a bot: 50 requests a
// second over every route but the interactions' (limitGlobally).
const fakeGlobalLimit = 50

// fakeWindow counts the requests of one bucket and channel.
type fakeWindow struct {
	count int
	reset time.Time
}

// fakeBucketOf returns the bucket of a request, by the API path's
// segments (without /api/v9), and its major parameter.
func fakeBucketOf(method string, segs []string) (fakeBucket, string, bool) {
	if len(segs) < 3 || segs[0] != "channels" {
		return fakeBucket{}, "", false
	}
	switch {
	case method == "POST" && len(segs) == 3 && segs[2] == "messages",
		method == "PATCH" && len(segs) == 4 && segs[2] == "messages":
		return fakeMessagesBucket, segs[1], true
	case len(segs) == 7 && segs[4] == "reactions":
		return fakeReactionsBucket, segs[1], true
	case method == "POST" && len(segs) == 3 && segs[2] == "typing":
		return fakeTypingBucket, segs[1], true
	case method == "POST" && len(segs) == 5 && segs[2] == "messages" && segs[4] == "threads":
		return fakeThreadsBucket, segs[1], true
	}
	return fakeBucket{}, "", false
}

// limitRates switches the fake's rate limits on, with time (also that of
// typing indicators) read from clock: a test's virtual clock, since the
// real limits in real time would make tests wait for seconds.
func (f *fakeDiscord) limitRates(clock func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = clock
}

// limitGlobally switches Discord's global limit on as well (with
// limitRates): fakeGlobalLimit requests in each second, counted from the
// first request of the second, whatever their route, but for the
// interactions' endpoints (their callbacks and webhooks), which Discord
// exempts.
func (f *fakeDiscord) limitGlobally() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.global = &fakeWindow{}
}

// admitGlobally counts a request against the global limit, if on. When
// the second's requests are spent it answers 429 (global) and returns
// false.
func (f *fakeDiscord) admitGlobally(w http.ResponseWriter, segs []string) bool {
	if segs[0] == "interactions" || segs[0] == "webhooks" || segs[0] == "gateway" {
		return true
	}
	f.mu.Lock()
	if f.global == nil || f.clock == nil {
		f.mu.Unlock()
		return true
	}
	now := f.nowLocked()
	win := f.global
	if !now.Before(win.reset) {
		win.count, win.reset = 0, now.Add(time.Second)
	}
	if win.count < fakeGlobalLimit {
		win.count++
		f.mu.Unlock()
		return true
	}
	f.limited++
	f.globalLimited++
	f.limitedLog = append(f.limitedLog, fmt.Sprintf("global /%s (window of %d since %s)", strings.Join(segs, "/"), win.count, win.reset.Add(-time.Second).UTC().Format("15:04:05.000")))
	f.changedLocked()
	retry := win.reset.Sub(now).Seconds()
	f.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Global", "true")
	h.Set("X-RateLimit-Scope", "global")
	h.Set("Retry-After", strconv.Itoa(int(retry+0.999)))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"message":     "You are being rate limited.",
		"retry_after": retry,
		"global":      true,
	})
	return false
}

// admit counts a request against the global limit and its bucket, and
// sets the rate-limit headers on w. When either is exhausted it answers
// 429 and returns false.
func (f *fakeDiscord) admit(w http.ResponseWriter, method string, segs []string) bool {
	if !f.admitGlobally(w, segs) {
		return false
	}
	b, major, ok := fakeBucketOf(method, segs)
	if !ok {
		return true
	}
	f.mu.Lock()
	if f.clock == nil {
		f.mu.Unlock()
		return true
	}
	now := f.nowLocked()
	key := b.id + "/" + major
	win := f.windows[key]
	if win == nil || !now.Before(win.reset) {
		win = &fakeWindow{reset: now.Add(b.window)}
		f.windows[key] = win
	}
	admitted := win.count < b.limit
	if admitted {
		win.count++
	} else {
		f.limited++
		f.limitedLog = append(f.limitedLog, fmt.Sprintf("%s %s %s /%s (window of %d since %s)", time.Now().UTC().Format("15:04:05.000"), b.id[:6], method, strings.Join(segs, "/"), win.count, win.reset.Add(-b.window).UTC().Format("15:04:05.000")))
		f.changedLocked()
	}
	remaining := b.limit - win.count
	resetAfter := win.reset.Sub(now).Seconds()
	f.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Bucket", b.id)
	h.Set("X-RateLimit-Limit", strconv.Itoa(b.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(win.reset.UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(resetAfter, 'f', 3, 64))
	if admitted {
		return true
	}
	h.Set("X-RateLimit-Scope", "user")
	h.Set("Retry-After", strconv.Itoa(int(resetAfter+0.999)))
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"message":     "You are being rate limited.",
		"retry_after": resetAfter,
		"global":      false,
	})
	return false
}

// tooManyRequests returns how many requests the fake's rate limits
// refused with a 429.
func (f *fakeDiscord) tooManyRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.limited
}

// limitedRequests describes the requests the fake's rate limits refused.
func (f *fakeDiscord) limitedRequests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.limitedLog...)
}
