package slack

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// With fakeOptions.tiers the fake limits the Web API methods as Slack
// does: per method for the whole workspace, by the method's tier, with a
// minute's calls allowed at once and the rest earned at the tier's rate
// (a bucket). A call beyond it gets HTTP 429 with Retry-After in whole
// seconds, as from Slack, and is counted (tooMany). chat.postMessage
// keeps its limit per channel (fakeOptions.channelLimit, fakelimit_test.go).

// fakeTier is a method's allowance on the fake: perMinute calls a minute,
// burst of them at once.
type fakeTier struct{ perMinute, burst int }

// fakeTiers are the tiers of Slack's reference for the methods the
// adapter calls in a thread (chat.startStream and chat.stopStream are
// Tier 2, chat.appendStream Tier 4).
var fakeTiers = map[string]fakeTier{
	"chat.startStream":            {20, 20},
	"chat.stopStream":             {20, 20},
	"chat.appendStream":           {100, 100},
	"chat.update":                 {50, 50},
	"chat.postEphemeral":          {100, 100},
	"reactions.add":               {50, 50},
	"reactions.remove":            {50, 50},
	"assistant.threads.setStatus": {50, 50},
	"agents.sessions.setStatus":   {50, 50},
	"conversations.replies":       {50, 50},
	"users.info":                  {100, 100},
}

// fakeBucket is a method's count on the fake.
type fakeBucket struct {
	tokens float64
	at     time.Time
}

// fakeTierState is the fake's count of every method under tiers.
type fakeTierState struct {
	minute  time.Duration          // a tier's window: a minute, unless a benchmark shortens it
	buckets map[string]*fakeBucket // by method
	tooMany map[string]int         // 429s answered, by method
	log     []string               // what they were
}

// admit counts call against its method's tier (with tiers) and
// chat.postMessage against its channel's limit (with channelLimit). A
// call beyond them gets a 429 with Retry-After, and admit returns false.
func (f *fakeSlack) admit(w http.ResponseWriter, method string, call apiCall) bool {
	if method == "chat.postMessage" && !f.takePostToken(call.Form.Get("channel"), call.At) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return false
	}
	t, ok := fakeTiers[method]
	if !f.o.tiers || !ok {
		return true
	}
	f.mu.Lock()
	ts := &f.tierState
	if ts.minute == 0 {
		ts.minute = time.Minute
	}
	if ts.buckets == nil {
		ts.buckets, ts.tooMany = map[string]*fakeBucket{}, map[string]int{}
	}
	every := ts.minute / time.Duration(t.perMinute)
	b := ts.buckets[method]
	if b == nil {
		b = &fakeBucket{tokens: float64(t.burst), at: call.At}
		ts.buckets[method] = b
	}
	if call.At.After(b.at) {
		b.tokens = min(float64(t.burst), b.tokens+float64(call.At.Sub(b.at))/float64(every))
		b.at = call.At
	}
	if b.tokens >= 1 {
		b.tokens--
		f.mu.Unlock()
		return true
	}
	wait := time.Duration((1 - b.tokens) * float64(every))
	ts.tooMany[method]++
	ts.log = append(ts.log, fmt.Sprintf("%s at %s (%.2f calls left)", method, call.At.UTC().Format("15:04:05.000"), b.tokens))
	f.notifyLocked()
	f.mu.Unlock()
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	w.WriteHeader(http.StatusTooManyRequests)
	return false
}

// spend empties method's bucket at now, as another process of the app
// would: the adapter's next call of it meets a 429.
func (f *fakeSlack) spend(method string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tierState.buckets == nil {
		f.tierState.buckets, f.tierState.tooMany = map[string]*fakeBucket{}, map[string]int{}
	}
	f.tierState.buckets[method] = &fakeBucket{at: now}
}

// tierLimited returns the 429s the tiers answered, by method, and what
// they were.
func (f *fakeSlack) tierLimited() (map[string]int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for m, n := range f.tierState.tooMany {
		out[m] = n
	}
	return out, append([]string(nil), f.tierState.log...)
}
