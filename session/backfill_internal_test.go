package session

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// TestFitBackfill: the newest messages are kept within the characters
// allowed; the newest alone is cut to fit; what is not a message is left
// out.
func TestFitBackfill(t *testing.T) {
	msg := func(text string) channels.Inbound {
		return channels.Inbound{Author: channels.Author{Name: "Ann"}, Text: text}
	}
	for _, tc := range []struct {
		name  string
		msgs  []channels.Inbound
		chars int
		want  []string
		cut   bool
	}{
		{"all fit", []channels.Inbound{msg("abc"), msg("def")}, 6, []string{"abc", "def"}, false},
		{"the oldest left out", []channels.Inbound{msg("abc"), msg("def")}, 5, []string{"def"}, true},
		{"the newest cut", []channels.Inbound{msg("abc"), msg("défghi")}, 4, []string{"défg"}, true},
		{"a stop left out", []channels.Inbound{msg("abc"), {Stop: true, Text: "stop"}, msg("")}, 10, []string{"abc"}, false},
	} {
		said, cut := fitBackfill(tc.msgs, Backfill{Messages: 30, Chars: tc.chars})
		var got []string
		for _, s := range said {
			got = append(got, s.Text)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" || cut != tc.cut {
			t.Errorf("%s: cut %v (want %v), texts (-want +got):\n%s", tc.name, cut, tc.cut, diff)
		}
	}
}
