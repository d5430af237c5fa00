package channels

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShowName returns a file's name as people are shown it: each format
// character (Unicode category Cf: U+202E RIGHT-TO-LEFT OVERRIDE and the
// other bidi controls, U+200B ZERO WIDTH SPACE, ...) and each control
// character written visibly as [U+XXXX], and bytes that are not UTF-8 as
// U+FFFD. "report[U+202E]fdp.exe" cannot pass for "reportexe.pdf". What
// it returns has no such character, so ShowName(ShowName(s)) ==
// ShowName(s). Every name shown in a thread or a prompt (files people
// attach, files the agent sends) goes through it.
func ShowName(name string) string {
	if !needsEscape(name) {
		return name
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(name, "\uFFFD") {
		if hidden(r) {
			fmt.Fprintf(&b, "[U+%04X]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hidden reports whether r changes or hides what is around it instead of
// showing itself.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r)
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if hidden(r) {
			return true
		}
	}
	return false
}
