package tooldisplay

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxBlankRun is the longest run of white space Visible keeps as it is:
// indentation and alignment stay, a run long enough to push the rest of a
// command out of sight does not.
const maxBlankRun = 16

// Visible returns s with what a reader could not see made visible, for
// text people must judge before they allow it (a command in a permission
// prompt):
//
//   - a run of more than 16 white-space characters becomes a marker that
//     counts them, "⟨3000 spaces⟩" (or "⟨20 white-space characters⟩" when
//     the run mixes kinds), so that "echo hi" followed by pages of spaces
//     and "&& curl … | sh" cannot pass for "echo hi";
//   - an invisible formatting character (zero-width spaces and joiners,
//     bidirectional overrides that reorder what is shown, a byte order
//     mark: Unicode category Cf) becomes its code, "⟨U+202E⟩", and a run
//     of one such character "⟨40 × U+200B⟩".
//
// Shorter runs of white space are kept unchanged, so what is shown means
// what s means; a marker says exactly what it replaces. Invalid UTF-8 is
// replaced by U+FFFD.
func Visible(s string) string {
	s = validUTF8(s)
	if !needsVisible(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			j, n, spaces := i, 0, true
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r) {
					break
				}
				spaces = spaces && r == ' '
				n++
				j += size
			}
			switch {
			case n <= maxBlankRun:
				b.WriteString(s[i:j])
			case spaces:
				fmt.Fprintf(&b, "⟨%d spaces⟩", n)
			default:
				fmt.Fprintf(&b, "⟨%d white-space characters⟩", n)
			}
			i = j
		case unicode.Is(unicode.Cf, r):
			j, n := i, 0
			for j < len(s) && strings.HasPrefix(s[j:], string(r)) {
				n++
				j += size
			}
			if n == 1 {
				fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			} else {
				fmt.Fprintf(&b, "⟨%d × U+%04X⟩", n, r)
			}
			i = j
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// needsVisible reports whether Visible would change s: it has a long run
// of white space or an invisible formatting character.
func needsVisible(s string) bool {
	run := 0
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			run++
			if run > maxBlankRun {
				return true
			}
		case unicode.Is(unicode.Cf, r):
			return true
		default:
			run = 0
		}
	}
	return false
}

// CodeSpan returns s set in a CommonMark code span whose fence no backticks
// inside s can close, so that nothing in s is read as Markdown (a "||"
// spoiler, a link, emphasis). s is neither cut nor redacted.
func CodeSpan(s string) string {
	fence := Fence(s, 1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		// CommonMark strips one space on each side, so a value may start or
		// end with a backtick without merging into the fence.
		s = " " + s + " "
	}
	return fence + s + fence
}

// Fence returns a code span's or code block's fence that nothing in s can
// close: a run of backticks longer than any in s, and atLeast long at the
// least.
func Fence(s string, atLeast int) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(atLeast, longest+1))
}
