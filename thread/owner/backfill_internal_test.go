package owner

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// TestFitBackfill: the newest messages are kept within the characters
// allowed; the newest alone is cut to fit; what is not a message is left
// out, and so are the gateway's own lines (Meta), not its agent's text.
func TestFitBackfill(t *testing.T) {
	msg := func(text string) channels.Inbound {
		return channels.Inbound{Author: channels.Author{Name: "Ann"}, Text: text}
	}
	own := func(text string, meta bool) channels.Inbound {
		return channels.Inbound{Author: channels.Author{Name: "gw", Bot: true, Self: true}, Text: text, Meta: meta}
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
		{"the gateway's lines left out", []channels.Inbound{msg("abc"), own("🛠️ ls", true), own("def", false), own("⚙️ Stopped", true)}, 6, []string{"abc", "def"}, false},
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
