// Package split cuts a long text into messages that fit a chat channel's
// limits, keeping markdown readable in every message.
//
// Every channel uses the same splitter; only the [Limits] differ. The
// concatenation of the parts' bodies is always exactly the input. A break
// falls, in order of preference, at a paragraph boundary, a line break, a
// sentence end, a space, and only then anywhere, never inside a UTF-8 code
// point and, unless a single grapheme cluster exceeds the limit, never
// inside a grapheme cluster. Separators stay with the part before the
// break. Code fences cut by a break are closed at the end of one part and
// re-opened at the start of the next.
//
// # Choosing a break
//
// For each part the splitter finds the window of text that may go into it:
// as many code points as MaxChars allows (after the part's Open and the
// Close a break would need) and no more lines than MaxLines allows. Within
// the window every possible break is ranked, best first:
//
//  1. paragraph: after a blank line, before a heading, before an opening
//     code fence, or after a closing code fence;
//  2. line: after any other line break outside code fences;
//  3. sentence: after ". ", "! ", "? " (or a tab instead of the space), or
//     after "。", "！", "？", outside code fences;
//  4. fenced paragraph: after a blank line inside a code fence;
//  5. fenced line: after any other line break inside a code fence;
//  6. word: after a space or tab (inside code fences too);
//  7. hard: after the last grapheme cluster that fits.
//
// A break of rank r is "at least as good" as all breaks of rank r and
// better. The splitter takes, for r = 1, 2, ..., 5, the last break at
// least as good as rank r, and uses the first one that leaves the part with
// at least half the code points the window holds. If none does, it uses
// the last break of the best rank present (so a short paragraph is still
// preferred to cutting the next one in a word), and only without any
// break of rank 1 to 6 does it cut hard.
//
// Some places get no rank, so that only a hard cut can end a part there:
// right after a heading (or a heading and blank lines), right after the
// opening line of a code fence, and right before its closing line (each
// would leave a heading alone or an empty code block); inside a heading
// line; inside a line that starts like a fence line (up to three spaces,
// then three or more backticks or tildes); and before text that would make
// the next part start with a fence run or a heading marker. A hard cut
// too avoids the last two if it can.
//
// # Code fences
//
// Fences follow CommonMark: up to three spaces of indentation, three or
// more backticks or tildes, for backticks an info string without
// backticks; a fence is closed by a run of the same character at least as
// long, with nothing but whitespace after it, or by the end of the text. A
// part that ends inside a fence gets as Close the fence run ("```", "~~~~")
// if its body ends with a line break, or "\n" and the run otherwise; the
// next part gets as Open the fence's opening line as written, with its
// indentation, info string and line break ("```go\n"). A fence whose
// opening line and Close together take more than half of MaxChars is not
// re-opened, so that every part keeps room for content; breaks inside it
// are plain breaks. The last part never gets a Close: an unclosed fence in
// the input stays unclosed.
//
// # Lines
//
// A line is text ended by "\n", or the text after the last "\n" if it is
// not empty; Open and Close count one line each. MaxLines is soft: a part
// holds at least one line however long, and the line limit only moves
// breaks earlier to a line boundary.
package split

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Limits are the limits for one message. A value of 0 or less means no limit.
type Limits struct {
	MaxChars int // max code points per part, 0 = unlimited
	MaxLines int // soft max lines per part, 0 = unlimited
}

// Part is one message of a split text.
type Part struct {
	Open  string // fence line re-opened at the start of this part ("```go\n"), "" if none
	Body  string // a contiguous piece of the input
	Close string // fence closing added at the end of this part ("\n```" or "```"), "" if none
}

// Text returns Open+Body+Close, the message to send.
func (p Part) Text() string {
	if p.Open == "" && p.Close == "" {
		return p.Body
	}
	return p.Open + p.Body + p.Close
}

// Fits reports whether s fits lim without splitting: at most MaxChars code
// points and at most MaxLines lines. Its cost is bounded by the limits, not
// by the length of s: code points are not counted in a text of more than
// four bytes per code point MaxChars allows, and lines only up to
// MaxLines+1.
func Fits(s string, lim Limits) bool {
	if lim.MaxChars > 0 && len(s) > lim.MaxChars && (len(s) > utf8.UTFMax*lim.MaxChars || utf8.RuneCountInString(s) > lim.MaxChars) {
		return false
	}
	if lim.MaxLines > 0 && !fewerLines(s, lim.MaxLines+1) {
		return false
	}
	return true
}

// fewerLines reports whether s has fewer than n lines, looking no further
// than the n-th line.
func fewerLines(s string, n int) bool {
	lines := 0
	for s != "" {
		// A line starts here.
		if lines++; lines >= n {
			return false
		}
		k := strings.IndexByte(s, '\n')
		if k < 0 {
			break
		}
		s = s[k+1:]
	}
	return true
}

// countLines returns the number of lines in s.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// First returns what Split(s, lim) returns first, without cutting the
// rest: p is the first part, more says that a second part follows, and
// open is that part's Open. Its cost is bounded by the limits (the window
// of one part), not by the length of s, so a text that grows can be cut
// again at every step.
func First(s string, lim Limits) (p Part, more bool, open string) {
	if s == "" {
		return Part{}, false, ""
	}
	if Fits(s, lim) {
		return Part{Body: s}, false, ""
	}
	sp := splitter{s: s, maxChars: max(lim.MaxChars, 0), maxLines: max(lim.MaxLines, 0)}
	e := sp.next(cursor{})
	p = Part{Body: s[:e.pos]}
	if e.pos == len(s) {
		return p, false, ""
	}
	if f := e.line.before; f.wrapped() {
		p.Close = f.closing(s[e.pos-1] == '\n')
		open = f.open
	}
	return p, true, open
}

// Split cuts s into parts that each fit lim: the Text of every part has at
// most lim.MaxChars code points and, unless one line of the input is
// longer, at most lim.MaxLines lines. The concatenation of all Body fields equals s
// exactly. Empty input returns nil; input that fits returns one Part with
// Body == s. See the package documentation for where breaks fall.
func Split(s string, lim Limits) []Part {
	if s == "" {
		return nil
	}
	if Fits(s, lim) {
		return []Part{{Body: s}}
	}
	sp := splitter{s: s, maxChars: max(lim.MaxChars, 0), maxLines: max(lim.MaxLines, 0)}
	n := 2
	if sp.maxChars > 0 {
		n += len(s) / sp.maxChars
	}
	parts := make([]Part, 0, n)
	c := cursor{}
	for c.pos < len(s) {
		e := sp.next(c)
		p := Part{Body: s[c.pos:e.pos]}
		if f := c.line.before; f.wrapped() {
			p.Open = f.open
		}
		if f := e.line.before; e.pos < len(s) && f.wrapped() {
			p.Close = f.closing(s[e.pos-1] == '\n')
		}
		parts = append(parts, p)
		c = e
	}
	return parts
}

// rank orders the breaks the splitter considers, worst first.
type rank uint8

const (
	rankWord rank = iota
	rankFenceLine
	rankFencePara
	rankSentence
	rankLine
	rankPara
	numRanks
)

// cursor is a position in the text together with what the splitter needs
// to resume there.
type cursor struct {
	pos int
	mid bool // pos is inside a line, not at its start
	// line is the line containing pos when mid. Otherwise only line.before
	// is set: the fence open at pos. Either way line.before is the fence a
	// part ending or starting at pos is inside of.
	line lineInfo
}

// candidate is a possible end of the current part. What the splitter
// needs to resume there is kept in partScan.line.
type candidate struct {
	ok    bool
	mid   bool // like cursor.mid
	pos   int
	runes int // code points of the body up to this break
}

// splitter holds the input and limits of one Split call.
type splitter struct {
	s        string
	maxChars int
	maxLines int
}

// partScan is the state of scanning one part.
type partScan struct {
	openRunes int // code points of the part's Open
	openLines int // lines of the part's Open
	best      [numRanks]candidate
	// line[r] is the line of best[r] if it is a mid-line break; otherwise
	// line[r].before is the fence open at best[r].
	line [numRanks]lineInfo
}

// cursor returns where best[r] is.
func (ps *partScan) cursor(r rank) cursor {
	b := &ps.best[r]
	if b.mid {
		return cursor{pos: b.pos, mid: true, line: ps.line[r]}
	}
	return cursor{pos: b.pos, line: lineInfo{before: ps.line[r].before}}
}

// fits reports whether a part whose body ends at a break with the given
// code points and lines (and a Close of closeRunes and closeLines) fits.
func (sp *splitter) fits(ps *partScan, runes, lines, closeRunes, closeLines int) bool {
	if sp.maxChars > 0 && ps.openRunes+runes+closeRunes > sp.maxChars {
		return false
	}
	if sp.maxLines > 0 && lines > max(1, sp.maxLines-ps.openLines-closeLines) {
		return false
	}
	return true
}

// next returns where the part starting at c ends.
func (sp *splitter) next(c cursor) cursor {
	s := sp.s
	var ps partScan
	if f := &c.line.before; f.wrapped() {
		ps.openRunes, ps.openLines = f.openRunes, 1
	}
	runeLimit := math.MaxInt
	if sp.maxChars > 0 {
		runeLimit = sp.maxChars - ps.openRunes
	}
	lineLimit := math.MaxInt
	if sp.maxLines > 0 {
		lineLimit = max(1, sp.maxLines-ps.openLines)
	}

	var (
		pos    = c.pos
		runes  = 0         // code points consumed
		lines  = 0         // lines completed
		li     = c.line    // the current line; li.after is the fence open after it
		prev   = kindBlank // kind of the last line completed
		sig    = kindBlank // kind of the last non-blank line completed
		window = -1        // code points that could go into the part
	)
	if !c.mid {
		li.after = c.line.before
	}
	for window < 0 {
		if !c.mid || pos > c.pos {
			// At a line start.
			if pos == len(s) {
				return cursor{pos: pos}
			}
			li.before = li.after
			classify(&li, s, pos, sp.maxChars)
			if pos > c.pos {
				sp.lineBreak(&ps, pos, runes, lines, prev, sig, &li.before, li.kind)
			}
			if lines+1 > lineLimit {
				window = runes
				break
			}
		}
		// Sentence and word breaks in this line, if any, cost the same.
		// The last of each kind is kept in locals and recorded when the
		// line or the window ends.
		midRank := rankWord
		midOK := false
		switch li.kind {
		case kindText:
			midRank, midOK = rankSentence, !li.fenceLike
		case kindCode:
			midOK = !li.fenceLike
		}
		closeRunes, closeLines := li.before.closeCost(false)
		midLimit := runeLimit // code points a mid-line break may leave in the body
		if midOK {
			midOK = sp.fits(&ps, 0, lines+1, closeRunes, closeLines)
			if sp.maxChars > 0 {
				midLimit = runeLimit - closeRunes
			}
		}
		wordPos, wordRunes := -1, 0
		sentPos, sentRunes := -1, 0
		// Only a line of at most runeLimit-runes bytes can fit whole, so
		// look for its end no further.
		end := -1 // end of the line, after its '\n'
		if room := runeLimit - runes; room >= len(s)-pos {
			end = len(s)
			if k := strings.IndexByte(s[pos:], '\n'); k >= 0 {
				end = pos + k + 1
			}
		} else if k := strings.IndexByte(s[pos:pos+room], '\n'); k >= 0 {
			end = pos + k + 1
		}
		if n := end - pos; end >= 0 && utf8.RuneCountInString(s[pos:end]) == n {
			// Fast path: an ASCII line that fits whole.
			if midOK {
				wordPos, wordRunes, sentPos, sentRunes = lastBreaks(s, pos, end, runes, midLimit, midRank == rankSentence)
			}
			runes += n
			pos = end
			if s[end-1] != '\n' {
				return cursor{pos: pos}
			}
		} else {
			for {
				if pos == len(s) {
					return cursor{pos: pos}
				}
				if runes >= runeLimit {
					window = runes
					break
				}
				b := s[pos]
				if b < utf8.RuneSelf {
					runes++
					pos++
					if b == '\n' {
						break
					}
					if !midOK || (b != ' ' && b != '\t') || runes > midLimit {
						continue
					}
					if pos < len(s) && (s[pos] >= utf8.RuneSelf && !boundaryAfter(s, pos-1, 1) || startsBlock(s[pos:])) {
						continue
					}
					if midRank == rankSentence && pos >= 2 {
						switch s[pos-2] {
						case '.', '!', '?':
							sentPos, sentRunes = pos, runes
							continue
						}
					}
					wordPos, wordRunes = pos, runes
					continue
				}
				ch, size := utf8.DecodeRuneInString(s[pos:])
				runes++
				pos += size
				if midRank == rankSentence && midOK && runes <= midLimit && (ch == '。' || ch == '！' || ch == '？') {
					if pos == len(s) || (s[pos] < utf8.RuneSelf || boundaryAfter(s, pos-size, size)) && !startsBlock(s[pos:]) {
						sentPos, sentRunes = pos, runes
					}
				}
			}
		}
		if wordPos >= 0 {
			ps.midBreak(rankWord, wordPos, wordRunes, &li)
		}
		if sentPos >= 0 {
			ps.midBreak(rankSentence, sentPos, sentRunes, &li)
		}
		if window >= 0 {
			break
		}
		// The line ended with '\n'.
		lines++
		prev = li.kind
		if li.kind != kindBlank && li.kind != kindCodeBlank {
			sig = li.kind
		}
	}
	if e, ok := ps.choose(window); ok {
		return e
	}
	if sp.maxChars > 0 && lines == 0 && window == pos-c.pos && !li.fenceLike {
		// Fast path for a hard cut in one line of ASCII text: cut where the
		// code points run out, if that is a grapheme cluster boundary.
		closeRunes, _ := li.before.closeCost(false)
		q := c.pos + runeLimit - closeRunes
		if q > c.pos && q <= pos && (s[q] < utf8.RuneSelf && (s[q-1] != '\r' || s[q] != '\n') || boundaryAfter(s, q-1, 1)) && !startsBlock(s[q:]) {
			return cursor{pos: q, mid: true, line: li}
		}
	}
	return sp.hardCut(c, &ps, pos)
}

// lineBreak considers a break at pos, the start of a line of kind next, for
// the part being scanned.
func (sp *splitter) lineBreak(ps *partScan, pos, runes, lines int, prev, sig kind, f *fence, next kind) {
	var r rank
	switch {
	case sig == kindHeading:
		return // keep a heading with what follows it
	case f.isOpen():
		if prev == kindFenceOpen || next == kindFenceClose {
			return // an empty code block
		}
		r = rankFenceLine
		if prev == kindCodeBlank && next == kindCode {
			r = rankFencePara
		}
	case next == kindBlank:
		r = rankLine
	case prev == kindBlank || next == kindHeading || next == kindFenceOpen || prev == kindFenceClose:
		r = rankPara
	default:
		r = rankLine
	}
	closeRunes, closeLines := f.closeCost(true)
	if !sp.fits(ps, runes, lines, closeRunes, closeLines) {
		return
	}
	ps.best[r] = candidate{ok: true, pos: pos, runes: runes}
	ps.line[r].before = *f
}

// midBreak records a break at pos, inside line li, as the last break of
// rank r. The caller has checked that it fits.
func (ps *partScan) midBreak(r rank, pos, runes int, li *lineInfo) {
	ps.best[r] = candidate{ok: true, mid: true, pos: pos, runes: runes}
	ps.line[r] = *li
}

// lastBreaks returns the last word break and the last sentence break in the
// ASCII line s[start:end], whose first byte is code point runes of the part,
// that leave at most limit code points in the body; -1 for none. sentences
// reports whether sentence ends count as such.
func lastBreaks(s string, start, end, runes, limit int, sentences bool) (wordPos, wordRunes, sentPos, sentRunes int) {
	wordPos, sentPos = -1, -1
	for i := end - 1; i >= start; i-- {
		if c := s[i]; c != ' ' && c != '\t' {
			continue
		}
		r := runes + i + 1 - start
		if r > limit || startsBlock(s[i+1:]) {
			continue
		}
		if sentences && i >= 1 && (s[i-1] == '.' || s[i-1] == '!' || s[i-1] == '?') {
			if sentPos < 0 {
				sentPos, sentRunes = i+1, r
			}
		} else if wordPos < 0 {
			wordPos, wordRunes = i+1, r
		}
		if wordPos >= 0 && (sentPos >= 0 || !sentences) {
			break
		}
	}
	return wordPos, wordRunes, sentPos, sentRunes
}

// startsBlock reports whether a part starting with rest, in the middle of
// a line, would start with what renders as a code fence or a heading.
func startsBlock(rest string) bool {
	i := 0
	for i < len(rest) && rest[i] == ' ' {
		i++
		if i > 3 {
			return false
		}
	}
	if i == len(rest) {
		return false
	}
	switch c := rest[i]; c {
	case '`', '~':
		return runLen(rest[i:], c) >= 3
	case '#':
		return isHeading(rest[i:])
	}
	return false
}

// boundaryAfter reports whether a grapheme cluster boundary follows the
// separator of size bytes at s[i:]. A combining mark, a spacing mark or a
// zero-width joiner after it would belong to its cluster. The separators
// (space, tab, CJK full stops) are never joined to what precedes them, so
// the cluster can be measured from the separator on.
func boundaryAfter(s string, i, size int) bool {
	cluster, _, _, _ := uniseg.FirstGraphemeClusterInString(s[i:], -1)
	return len(cluster) == size
}

// choose picks the end of the part among the recorded breaks, as described
// in the package documentation. window is the number of code points the
// part could hold.
func (ps *partScan) choose(window int) (cursor, bool) {
	last := -1 // rank of the last break at least as good as r
	for r := rankPara; r >= rankFenceLine; r-- {
		if b := &ps.best[r]; b.ok && (last < 0 || b.pos > ps.best[last].pos) {
			last = int(r)
		}
		if last >= 0 && 2*ps.best[last].runes >= window {
			return ps.cursor(rank(last)), true
		}
	}
	for r := rankPara; ; r-- {
		if ps.best[r].ok {
			return ps.cursor(r), true
		}
		if r == rankWord {
			return cursor{}, false
		}
	}
}

// hardCut returns the end of the part starting at c when no break of any
// rank fits: after the last grapheme cluster that fits before end, or,
// when even the first cluster does not fit, after as many of its code
// points as fit. It avoids cutting inside a line that starts like a fence
// and before a fence run or heading marker if it can.
func (sp *splitter) hardCut(c cursor, ps *partScan, end int) cursor {
	s := sp.s
	// A cut found so far: at pos, inside or at the end of the line saved
	// with it.
	type cut struct {
		pos  int
		mid  bool
		line int // index of the line in this scan
	}
	var (
		best, fallback         = cut{pos: -1}, cut{pos: -1}
		bestLine, fallbackLine lineInfo
		pos                    = c.pos
		runes, lines           int
		li                     = c.line
		atStart                = !c.mid
		state                  = -1
		rest                   = s[pos:]
		midClose, midLines     int // Close of a cut inside li
		endClose, endLines     int // Close of a cut after li
	)
	if atStart {
		li.after = c.line.before
	} else {
		midClose, midLines = li.before.closeCost(false)
		endClose, endLines = li.after.closeCost(true)
	}
	for rest != "" {
		if atStart {
			li.before = li.after
			classify(&li, s, pos, sp.maxChars)
			atStart = false
			midClose, midLines = li.before.closeCost(false)
			endClose, endLines = li.after.closeCost(true)
		}
		var cluster, r string
		var st int
		if rest[0] < utf8.RuneSelf && (len(rest) == 1 || rest[1] < utf8.RuneSelf && (rest[0] != '\r' || rest[1] != '\n')) {
			// Two ASCII characters other than CR LF always have a
			// boundary between them, and nothing before an ASCII
			// character matters for the boundaries after it.
			cluster, r, st = rest[:1], rest[1:], -1
			runes++
		} else {
			cluster, r, _, st = uniseg.FirstGraphemeClusterInString(rest, state)
			runes += utf8.RuneCountInString(cluster)
		}
		q := pos + len(cluster)
		if q > end {
			break
		}
		at := cut{pos: q, mid: true, line: lines}
		bodyLines, closeRunes, closeLines := lines+1, midClose, midLines
		if cluster[len(cluster)-1] == '\n' {
			at.mid = false
			bodyLines, closeRunes, closeLines = lines+1, endClose, endLines
			atStart = true
		}
		if sp.fits(ps, runes, bodyLines, closeRunes, closeLines) {
			if at.mid && (li.fenceLike || startsBlock(r)) {
				if fallback.pos < 0 || fallback.line != at.line {
					fallbackLine = li
				}
				fallback = at
			} else {
				if best.pos < 0 || best.line != at.line {
					bestLine = li
				}
				best = at
			}
		} else if sp.maxChars > 0 && ps.openRunes+runes > sp.maxChars {
			break
		}
		if atStart {
			lines++
		}
		pos, rest, state = q, r, st
	}
	for _, k := range []struct {
		c  cut
		li *lineInfo
	}{{best, &bestLine}, {fallback, &fallbackLine}} {
		switch {
		case k.c.pos < 0:
		case k.c.mid:
			return cursor{pos: k.c.pos, mid: true, line: *k.li}
		default:
			return cursor{pos: k.c.pos, line: lineInfo{before: k.li.after}}
		}
	}
	// The first grapheme cluster alone is too long: cut it between code points.
	li = c.line
	if !c.mid {
		li = lineInfo{before: c.line.before}
		classify(&li, s, c.pos, sp.maxChars)
	}
	closeRunes, _ := li.before.closeCost(false)
	n := 1
	if sp.maxChars > 0 {
		n = max(1, sp.maxChars-ps.openRunes-closeRunes)
	}
	pos = c.pos
	for i := 0; i < n && pos < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[pos:])
		pos += size
	}
	return cursor{pos: pos, mid: true, line: li}
}
