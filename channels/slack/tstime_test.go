package slack

import (
	"testing"
	"time"
)

// TestTSTime: a Slack timestamp is Unix seconds and microseconds; what
// is not one has no time.
func TestTSTime(t *testing.T) {
	tests := []struct {
		ts   string
		want time.Time
	}{
		{"1700000000.000100", time.Unix(1700000000, 100_000).UTC()},
		{"1700000000", time.Unix(1700000000, 0).UTC()},
		{"1700000000.5", time.Unix(1700000000, 500_000_000).UTC()},
		{"", time.Time{}},
		{"abc.000001", time.Time{}},
		{"1700000000.x", time.Time{}},
		{"-5.000001", time.Time{}},
		{"1700000000.0000000001", time.Time{}},
	}
	for _, tc := range tests {
		if got := tsTime(tc.ts); !got.Equal(tc.want) {
			t.Errorf("tsTime(%q) = %v, want %v", tc.ts, got, tc.want)
		}
	}
}

// FuzzTSTime: any timestamp gives a time in UTC or none, never a panic.
func FuzzTSTime(f *testing.F) {
	f.Add("1700000000.000100")
	f.Add("1.")
	f.Add("9999999999999999999.1")
	f.Fuzz(func(t *testing.T, ts string) {
		got := tsTime(ts)
		if !got.IsZero() && got.Location() != time.UTC {
			t.Fatalf("tsTime(%q) = %v, not in UTC", ts, got)
		}
	})
}
