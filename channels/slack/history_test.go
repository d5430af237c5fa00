package slack

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

const seedReplies = `{"ok":true,"messages":[{"type":"message","user":"U1","text":"start","ts":"1700000000.000001","thread_ts":"1700000000.000001"},
{"type":"message","user":"U1","text":"more","ts":"1700000000.000009","thread_ts":"1700000000.000001","files":[{"name":"a.txt","size":3}]}],"has_more":true}`

func TestDecodeReplies(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		want      replies
		wantErr   bool
		rateLimit bool
	}{
		{"page", seedReplies, replies{OK: true, HasMore: true, Messages: []event{
			{Type: "message", User: "U1", Text: "start", TS: "1700000000.000001", ThreadTS: "1700000000.000001"},
			{Type: "message", User: "U1", Text: "more", TS: "1700000000.000009", ThreadTS: "1700000000.000001", Files: []file{{Name: "a.txt", Size: 3}}},
		}}, false, false},
		{"fields of other types are empty", `{"ok":true,"messages":[{"user":{"id":"U1"},"ts":1.5,"text":"x"}]}`,
			replies{OK: true, Messages: []event{{Text: "x"}}}, false, false},
		{"refused", `{"ok":false,"error":"not_in_channel"}`, replies{}, true, false},
		{"rate limited", `{"ok":false,"error":"ratelimited"}`, replies{}, true, true},
		{"not JSON", `{"ok":`, replies{}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeReplies([]byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("decodeReplies error = %v, want error %v", err, tc.wantErr)
			}
			if _, ok := errors.AsType[*channels.RateLimitError](err); ok != tc.rateLimit {
				t.Errorf("decodeReplies error = %v, want a rate limit: %v", err, tc.rateLimit)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decodeReplies (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzDecodeReplies(f *testing.F) {
	f.Add([]byte(seedReplies))
	f.Add([]byte(`{"ok":false,"error":"ratelimited"}`))
	f.Add([]byte(`{"ok":true,"messages":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeReplies(body)
		if err == nil && !r.OK {
			t.Fatalf("decodeReplies(%q) = %+v without an error, want ok", body, r)
		}
		for i := 1; i < len(r.Messages); i++ {
			x, y := string(r.Messages[i-1].TS), string(r.Messages[i].TS)
			if sign(compareTS(x, y)) != -sign(compareTS(y, x)) {
				t.Fatalf("compareTS(%q, %q) is not antisymmetric", x, y)
			}
		}
	})
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

func TestCompareTS(t *testing.T) {
	tests := []struct {
		x, y string
		want int
	}{
		{"1700000000.000001", "1700000000.000002", -1},
		{"1700000000.000010", "1700000000.000009", 1},
		{"999999999.999999", "1000000000.000000", -1},
		{"1700000001.000000", "1700000000.999999", 1},
		{"1700000000.000001", "1700000000.000001", 0},
	}
	for _, tc := range tests {
		if got := sign(compareTS(tc.x, tc.y)); got != tc.want {
			t.Errorf("compareTS(%q, %q) = %d, want %d", tc.x, tc.y, got, tc.want)
		}
	}
}

// History reads are paced: one per interval, the next told how long to
// wait; negative turns the pacing off.
func TestHistoryPacing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Adapter{o: Options{}}
	if err := a.paceHistory(t0); err != nil {
		t.Fatalf("first read: %v", err)
	}
	err := a.paceHistory(t0.Add(20 * time.Second))
	rl, ok := errors.AsType[*channels.RateLimitError](err)
	if !ok || rl.RetryAfter != 40*time.Second {
		t.Fatalf("read 20 s later = %v, want a rate limit of 40 s", err)
	}
	if err := a.paceHistory(t0.Add(time.Minute)); err != nil {
		t.Errorf("read a minute later: %v", err)
	}
	off := &Adapter{o: Options{HistoryInterval: -1}}
	for range 3 {
		if err := off.paceHistory(t0); err != nil {
			t.Errorf("unpaced read: %v", err)
		}
	}
}
