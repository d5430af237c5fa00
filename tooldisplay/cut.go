package tooldisplay

import (
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// ellipsis marks where text was cut.
const ellipsis = "…"

// Cut shortens s to at most max code points, ending with "…" when cut, never
// splitting a code point or a grapheme cluster (an emoji ZWJ sequence, a
// flag, a letter with combining accents). White space before the "…" is
// dropped. max <= 0 means no cut. Invalid UTF-8 in s is replaced by U+FFFD,
// so the result is always valid UTF-8.
func Cut(s string, max int) string {
	s = validUTF8(s)
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	budget := max - utf8.RuneCountInString(ellipsis)
	end, pos, used := 0, 0, 0
	state := -1
	for rest := s; rest != ""; {
		var cluster string
		cluster, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		n := utf8.RuneCountInString(cluster)
		if used+n > budget {
			break
		}
		used += n
		pos += len(cluster)
		if strings.TrimSpace(cluster) != "" {
			end = pos
		}
	}
	return s[:end] + ellipsis
}

// CutMiddle shortens s to at most max code points by replacing its middle
// with "…", keeping about as much of the start as of the end, with the same
// guarantees as [Cut]. It suits values whose end matters as much as their
// start: commands, paths, URLs.
func CutMiddle(s string, max int) string {
	return Elide(s, max, func(int) string { return ellipsis })
}

// Elide shortens s to at most max code points like [CutMiddle], putting
// note(n) in place of the middle, where n is how many code points of s were
// left out: a cut that says what it hid. note's length may grow with n, but
// not beyond the length of note(code points in s). When max leaves no room
// for the note and an end of s, the result is the note alone.
func Elide(s string, max int, note func(hidden int) string) string {
	s = validUTF8(s)
	total := utf8.RuneCountInString(s)
	if max <= 0 || total <= max {
		return s
	}
	// bounds[i] is the byte offset where cluster i starts; runes[i] its size
	// in code points.
	var bounds, runes []int
	state, pos := -1, 0
	for rest := s; rest != ""; {
		var cluster string
		cluster, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		bounds = append(bounds, pos)
		runes = append(runes, utf8.RuneCountInString(cluster))
		pos += len(cluster)
	}
	// The note can only get shorter as fewer code points are hidden, so
	// the budget leaves room for the longest one.
	budget := max - utf8.RuneCountInString(note(total))
	head, used := 0, 0
	for head < len(runes) && used+runes[head] <= (budget+1)/2 {
		used += runes[head]
		head++
	}
	tail := len(runes) // the first cluster kept from the end
	for tail > head && used+runes[tail-1] <= budget {
		used += runes[tail-1]
		tail--
	}
	headEnd, tailStart := len(s), len(s)
	if head < len(bounds) {
		headEnd = bounds[head]
	}
	if tail < len(bounds) {
		tailStart = bounds[tail]
	}
	return s[:headEnd] + note(total-used) + s[tailStart:]
}

// validUTF8 returns s with invalid bytes replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
