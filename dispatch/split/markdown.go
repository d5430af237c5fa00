package split

import (
	"strings"
	"unicode/utf8"
)

// kind classifies one line of markdown for choosing where to break.
type kind uint8

const (
	kindText       kind = iota // ordinary text outside code fences
	kindBlank                  // empty or whitespace-only line outside code fences
	kindHeading                // ATX heading line (# .. ######)
	kindFenceOpen              // line that opens a code fence
	kindFenceClose             // line that closes the open code fence
	kindCode                   // non-blank line inside a code fence
	kindCodeBlank              // blank line inside a code fence
)

// fence describes an open code fence. The zero value means no fence is open.
type fence struct {
	open      string // the opening line, including its line ending
	indent    int32  // spaces before the fence run in open
	n         int32  // length of the fence run, at least 3; 0 when no fence is open
	openRunes int    // code points in open
	wrap      bool   // parts that break inside this fence re-open and close it
}

func (f *fence) isOpen() bool { return f.n > 0 }

// run returns the fence characters of the opening line ("```", "~~~~").
func (f fence) run() string { return f.open[f.indent : f.indent+f.n] }

// wrapped reports whether a part that starts or ends inside f gets Open or Close.
func (f *fence) wrapped() bool { return f.n > 0 && f.wrap }

// closing returns the Close of a part that ends inside f. afterNewline
// reports whether the part's body ends with a line break; then the fence
// run alone closes the block, otherwise it goes on a line of its own.
func (f fence) closing(afterNewline bool) string {
	if afterNewline {
		return f.run()
	}
	if f.n == 3 {
		// The common case, without allocating.
		if f.open[f.indent] == '`' {
			return "\n```"
		}
		return "\n~~~"
	}
	return "\n" + f.run()
}

// closeCost returns the code points and lines f's Close adds to a part.
func (f *fence) closeCost(afterNewline bool) (runes, lines int) {
	if !f.wrapped() {
		return 0, 0
	}
	if afterNewline {
		return int(f.n), 1
	}
	return int(f.n) + 1, 1
}

// lineInfo is what the splitter knows about one line.
type lineInfo struct {
	kind kind
	// fenceLike is set for a line that starts like a fence line: up to
	// three spaces, then three or more backticks or tildes. Cutting such a
	// line could turn its first half into a fence line, so it is not cut
	// unless nothing else fits.
	fenceLike bool
	before    fence // fence open at the start of the line
	after     fence // fence open after the line
}

// classify sets li.kind, li.fenceLike and li.after for the line starting at
// s[start:], given li.before, the fence open before it. It follows CommonMark for fences (up to three
// spaces of indentation, three or more backticks or tildes, an info string
// without backticks for backtick fences, a closing run of the same
// character at least as long followed only by whitespace) and ATX headings.
// maxChars decides whether a fence opened here is wrapped: a fence is
// re-opened in later parts only when its opening line plus its closing take
// at most half of maxChars, so that every part keeps room for content.
func classify(li *lineInfo, s string, start int, maxChars int) {
	f := &li.before
	j := start
	for j < len(s) && j-start < 4 && s[j] == ' ' {
		j++
	}
	indented := j-start > 3
	li.fenceLike = !indented && j < len(s) && (s[j] == '`' || s[j] == '~') && runLen(s[j:], s[j]) >= 3
	if f.isOpen() {
		if li.fenceLike && isClosingFence(s[j:], f) {
			li.kind = kindFenceClose
			li.after = fence{}
			return
		}
		li.kind = kindCode
		if isBlank(s[start:]) {
			li.kind = kindCodeBlank
		}
		li.after = li.before
		return
	}
	if !indented && j < len(s) {
		switch s[j] {
		case '`', '~':
			if li.fenceLike && openingFence(&li.after, s, start, j, maxChars) {
				li.kind = kindFenceOpen
				return
			}
		case '#':
			if isHeading(s[j:]) {
				li.kind = kindHeading
				li.after = fence{}
				return
			}
		}
	}
	li.kind = kindText
	if isBlank(s[start:]) {
		li.kind = kindBlank
	}
	li.after = fence{}
}

// isBlank reports whether the line at the start of s holds only whitespace.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// runLen returns the number of leading bytes of s equal to c.
func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// openingFence reports whether the line starting at s[start:], whose first
// non-space byte is at s[j], opens a code fence, and if so sets *f to it.
func openingFence(f *fence, s string, start, j, maxChars int) bool {
	c := s[j]
	n := runLen(s[j:], c)
	if n < 3 {
		return false
	}
	end := len(s)
	if k := strings.IndexByte(s[j:], '\n'); k >= 0 {
		end = j + k + 1
	}
	if c == '`' && strings.IndexByte(s[j+n:end], '`') >= 0 {
		return false
	}
	*f = fence{open: s[start:end], indent: int32(j - start), n: int32(n)}
	f.openRunes = utf8.RuneCountInString(f.open)
	f.wrap = maxChars <= 0 || 2*(f.openRunes+1+n) <= maxChars
	return true
}

// isClosingFence reports whether line, the rest of a line after its
// indentation, closes f.
func isClosingFence(line string, f *fence) bool {
	n := runLen(line, f.open[f.indent])
	if n < int(f.n) {
		return false
	}
	return isBlank(line[n:])
}

// isHeading reports whether line, the rest of a line after its indentation,
// is an ATX heading.
func isHeading(line string) bool {
	n := runLen(line, '#')
	if n < 1 || n > 6 {
		return false
	}
	if n == len(line) {
		return true
	}
	switch line[n] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
