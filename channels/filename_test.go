package channels_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

func TestShowName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":               "report.pdf",
		"reporte\u202efdp.exe":     "reporte[U+202E]fdp.exe",
		"a\u200bb.txt":             "a[U+200B]b.txt",
		"\u2066x\u2069.png":        "[U+2066]x[U+2069].png",
		"tag\U000E0041.txt":        "tag[U+E0041].txt",
		"line\nbreak\x00.txt":      "line[U+000A]break[U+0000].txt",
		"bad\xff.txt":              "bad\uFFFD.txt",
		"café — ünïcode 🙂.md":      "café — ünïcode 🙂.md",
		"\u061c\u200e\u200f\ufeff": "[U+061C][U+200E][U+200F][U+FEFF]",
	} {
		if got := channels.ShowName(in); got != want {
			t.Errorf("ShowName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzShowName: the result is valid UTF-8 without a format or control
// character, ShowName leaves it as it is, and a name without any is kept.
func FuzzShowName(f *testing.F) {
	for _, s := range []string{"a.txt", "x\u202ey", "\xff\xfe", "\u200b", "[U+202E]", "\U000E0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := channels.ShowName(s)
		if !utf8.ValidString(got) {
			t.Fatalf("ShowName(%q) = %q, not UTF-8", s, got)
		}
		for _, r := range got {
			if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
				t.Fatalf("ShowName(%q) = %q keeps %U", s, got, r)
			}
		}
		if again := channels.ShowName(got); again != got {
			t.Fatalf("ShowName is not idempotent: %q -> %q -> %q", s, got, again)
		}
		clean := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) || unicode.IsControl(r) })
		if clean && got != s {
			t.Fatalf("ShowName(%q) = %q, want it kept", s, got)
		}
	})
}
