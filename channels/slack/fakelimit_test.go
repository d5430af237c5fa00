package slack

import "time"

// The fake's channel limit (fakeOptions.channelLimit): Slack takes about
// one post a second in a channel, with short bursts.

// postBucket is a channel's allowance of posts under channelLimit.
type postBucket struct {
	tokens float64
	at     time.Time
}

// Slack's posting limit, as the fake keeps it: one a second per channel,
// with a burst of postBurst.
const postBurst = 3

// takePostToken reports whether a post in channel at now is within the
// channel's limit (always, without channelLimit), and counts one that is
// not.
func (f *fakeSlack) takePostToken(channel string, now time.Time) bool {
	if !f.o.channelLimit {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.postTokens == nil {
		f.postTokens = map[string]postBucket{}
	}
	b, ok := f.postTokens[channel]
	if !ok {
		b = postBucket{tokens: postBurst, at: now}
	}
	b.tokens = min(postBurst, b.tokens+now.Sub(b.at).Seconds())
	b.at = now
	if b.tokens < 1 {
		f.postTokens[channel] = b
		f.limited++
		f.notifyLocked()
		return false
	}
	b.tokens--
	f.postTokens[channel] = b
	return true
}

// limitedCount is how many posts the channel limit refused.
func (f *fakeSlack) limitedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.limited
}
