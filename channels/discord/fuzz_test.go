package discord

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// FuzzReadMessage feeds MESSAGE_CREATE payloads, as Discord might send
// them, through discordgo's decoding and readMessage.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte(`{"id":"5","channel_id":"2","guild_id":"3","author":{"id":"1","username":"ann"},"member":{"roles":["r"]},"content":"<@900> hi","mentions":[{"id":"900"}],"type":0}`))
	f.Add([]byte(`{"id":"5","channel_id":"2","author":{"id":"900","bot":true},"content":"own","type":0}`))
	f.Add([]byte(`{"id":"5","channel_id":"2","author":null,"member":null,"mentions":[null],"type":19}`))
	f.Add([]byte(`{"id":"5","channel_id":"2","author":{"id":"1"},"content":"<@<@900>900>","type":0}`))
	f.Add([]byte(`{"id":"5","channel_id":"2","guild_id":"3","author":{"id":"1"},"content":"<@&<@&700>700> hi","mention_roles":["700"],"type":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m discordgo.MessageCreate
		if json.Unmarshal(data, &m) != nil || m.Message == nil {
			return
		}
		in, ok := readMessage(m.Message, "900", "700")
		if !ok {
			return
		}
		if in.id == "" || in.channel == "" || in.author.ID == "900" {
			t.Errorf("readMessage accepted %+v", in)
		}
		if strings.Contains(in.text, "<@900>") || strings.Contains(in.text, "<@!900>") || strings.Contains(in.text, "<@&700>") {
			t.Errorf("text %q still mentions the bot", in.text)
		}
		if in.text != strings.TrimSpace(in.text) {
			t.Errorf("text %q is not trimmed", in.text)
		}
	})
}

// FuzzReadClick feeds INTERACTION_CREATE payloads through discordgo's
// decoding and readClick.
func FuzzReadClick(f *testing.F) {
	f.Add([]byte(`{"id":"7","application_id":"9","type":3,"token":"tok","channel_id":"2","guild_id":"3","data":{"custom_id":"p/allow","component_type":2},"message":{"id":"4","channel_id":"2"},"member":{"user":{"id":"1","username":"ann"},"roles":["r"]}}`))
	f.Add([]byte(`{"id":"7","type":3,"token":"tok","data":{"custom_id":"x"},"message":{"id":"4","channel_id":"2"},"user":{"id":"1"}}`))
	f.Add([]byte(`{"id":"7","type":2,"token":"tok","data":{"name":"cmd"}}`))
	f.Add([]byte(`{"id":"7","type":3,"token":"tok","data":null,"message":null,"member":{"user":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var i discordgo.InteractionCreate
		if json.Unmarshal(data, &i) != nil {
			return
		}
		c, ok := readClick(i.Interaction)
		if !ok {
			return
		}
		if c.channel == "" || c.message == "" || c.customID == "" || c.author.ID == "" {
			t.Errorf("readClick accepted %+v", c)
		}
	})
}

// FuzzThreadName checks that any prompt gives a valid thread name.
func FuzzThreadName(f *testing.F) {
	for _, s := range []string{"", "fix it", "\n\n a \t b", strings.Repeat("é", 200), "\xff\xfe", "a\u0085b\u2028c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := threadName(s)
		n := utf8.RuneCountInString(name)
		if n < 1 || n > maxThreadName || !utf8.ValidString(name) {
			t.Errorf("threadName(%q) = %q (%d characters)", s, name, n)
		}
		if strings.ContainsAny(name, "\n\r\t") || name != strings.TrimSpace(name) {
			t.Errorf("threadName(%q) = %q has line breaks or outer space", s, name)
		}
	})
}

// FuzzStripMention checks that no mention of the bot survives.
func FuzzStripMention(f *testing.F) {
	for _, s := range []string{"<@900> hi", "<@<@900>900>", "<@!<@900>900>", "no mention", "<@9000>", "<@&<@900>700>", "<@&700> hi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := stripMention(s, "900", "700")
		if strings.Contains(got, "<@900>") || strings.Contains(got, "<@!900>") || strings.Contains(got, "<@&700>") {
			t.Errorf("stripMention(%q) = %q", s, got)
		}
	})
}

// FuzzParseRateLimit feeds rate-limit headers and 429 bodies, and what
// they say to a limiter.
func FuzzParseRateLimit(f *testing.F) {
	f.Add(429, "0", "1.5", "", "", `{"retry_after": 2.5, "global": false}`, "abc", "5")
	f.Add(200, "0", "30", "", "", ``, "abc", "5")
	f.Add(429, "", "", "true", "1e308", `{"retry_after": -1}`, "", "")
	f.Add(429, "x", "NaN", "", "Inf", `{"message": "Maximum number of edits to messages older than 1 hour reached", "code": 30046}`, "b", "-2")
	f.Fuzz(func(t *testing.T, status int, remaining, resetAfter, global, retryAfter, body, bucketID, limit string) {
		h := http.Header{}
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset-After", resetAfter)
		h.Set("X-RateLimit-Global", global)
		h.Set("X-RateLimit-Bucket", bucketID)
		h.Set("X-RateLimit-Limit", limit)
		h.Set("Retry-After", retryAfter)
		ri := parseRateLimit(status, h, []byte(body))
		if ri.wait < 0 || ri.wait > maxRateWait || ri.resetAfter < 0 || ri.resetAfter > maxRateWait {
			t.Errorf("parseRateLimit = %+v, want waits in [0, %v]", ri, maxRateWait)
		}
		if ri.remaining < 0 || ri.limit < 0 || len(ri.bucket) > maxBucketID {
			t.Errorf("parseRateLimit = %+v: a negative count or an overlong bucket id", ri)
		}
		if (ri.global || ri.limited) != (status == http.StatusTooManyRequests) {
			t.Errorf("parseRateLimit(%d) = %+v: only a 429 limits", status, ri)
		}
		// Whatever the answer said, a limiter never asks to wait longer
		// than maxRateWait, and nothing stays in flight.
		l := newLimiter()
		now := time.Unix(1000, 0)
		r := routeOf("POST", "/api/v9/channels/1/messages")
		tk, err := l.acquire(r, now)
		if err != nil {
			t.Fatalf("first acquire = %v", err)
		}
		l.done(tk, r, &ri, now)
		if _, err := l.acquire(r, now.Add(maxRateWait)); err != nil {
			t.Errorf("acquire after %v = %v", maxRateWait, err)
		}
	})
}

// FuzzRouteOf checks that any request path gives a route.
func FuzzRouteOf(f *testing.F) {
	f.Add("PATCH", "/api/v9/channels/1/messages/2")
	f.Add("POST", "/api/v")
	f.Add("GET", "//channels//")
	f.Add("POST", "/webhooks/1/tok/x")
	f.Fuzz(func(t *testing.T, method, path string) {
		r := routeOf(method, path)
		if !strings.HasPrefix(r.template, method+" ") {
			t.Errorf("routeOf(%q, %q) = %+v", method, path, r)
		}
		if again := routeOf(method, path); again != r {
			t.Errorf("routeOf is not stable: %+v, then %+v", r, again)
		}
	})
}

// FuzzResumeURL feeds READY payloads to the resume URL's learning: it
// keeps only a ws(s) URL with a host, and a dial there is never refused.
func FuzzResumeURL(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","resume_gateway_url":"wss://gateway-us-east1-b.discord.gg"}`))
	f.Add([]byte(`{"resume_gateway_url":"http://example.com/x"}`))
	f.Add([]byte(`{"resume_gateway_url":"wss:///nohost"}`))
	f.Add([]byte(`{"resume_gateway_url":7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r resumeURL
		r.learn(data)
		if r.url == nil {
			if _, ok := r.lookup(); ok {
				t.Error("lookup answered without a resume URL")
			}
			return
		}
		if (r.url.Scheme != "ws" && r.url.Scheme != "wss") || r.url.Host == "" {
			t.Fatalf("kept resume URL %q", r.url)
		}
		dial := *r.url
		dial.Scheme = map[string]string{"ws": "http", "wss": "https"}[dial.Scheme]
		if err := r.check(&http.Request{URL: &dial}); err != nil {
			t.Errorf("a dial to the resume URL %q was refused: %v", r.url, err)
		}
	})
}
