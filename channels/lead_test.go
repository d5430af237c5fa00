package channels_test

import (
	"testing"

	"github.com/acpgw/gateway/channels"
)

func TestTrimLead(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{" Second message.", "Second message."},
		{"   three", "three"},
		{"    code()", "    code()"},
		{"\n\n Next", "\n\n Next"},
		{"  \n\t\n    code\n", "  \n\t\n    code\n"},
		{"Plain", "Plain"},
		{"Inner  spaces stay ", "Inner  spaces stay "},
		{" ", " "},
		{" \n ", " \n "},
		{"", ""},
		{" \tx", " \tx"},
		{"\r\n two", "\r\n two"},
		{" \nx", " \nx"},
	} {
		if got := channels.TrimLead(c.in); got != c.want {
			t.Errorf("TrimLead(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzTrimLead(f *testing.F) {
	for _, s := range []string{" a", "\n\n  b", "    c", " ", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := channels.TrimLead(s)
		if len(got) > len(s) || s[len(s)-len(got):] != got {
			t.Fatalf("TrimLead(%q) = %q, not a suffix", s, got)
		}
		if channels.TrimLead(got) != got && got != s {
			t.Fatalf("TrimLead not idempotent on %q: %q then %q", s, got, channels.TrimLead(got))
		}
	})
}
