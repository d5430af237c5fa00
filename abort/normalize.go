package abort

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns the form of s that stop phrases are matched in:
//
//   - invalid UTF-8 is replaced by U+FFFD, and the text is in Unicode NFKC
//     (full-width letters and punctuation become ASCII, ligatures split);
//   - letters are case-folded to lower case ("STOP", "Stop" → "stop");
//   - curly and angle quotes become straight quotes (‘’ → ', “”«»「」 → ");
//   - every run of white space (including no-break spaces) and commas
//     becomes one space, and zero-width characters, Arabic vowel marks and
//     the Arabic tatweel are dropped;
//   - leading and trailing spaces, quotes, brackets and emphasis marks are
//     removed, as is trailing punctuation of any script, repeated
//     ("!!!", "…", "。", "！", "？", "؟", "।");
//   - leading platform user mentions (Discord "<@123>" and "<@!123>", Slack
//     "<@U123ABC>" and "<@U123ABC|name>") are removed with the punctuation
//     and spaces after them. Any user's mention is removed: in a thread bound
//     to an agent, the gateway is the one addressed.
//
// Plain "@name" mentions are not removed here, because only a Detector knows
// the bot's names. Normalize is idempotent: Normalize(Normalize(s)) ==
// Normalize(s). It does no I/O and is safe for concurrent use.
func Normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	// Each step can, rarely, undo another's work (NFKC can produce
	// upper case or spaces; folding can produce text that composes), so
	// repeat until nothing changes. Two passes are almost always enough.
	for range 8 {
		next := normalizeOnce(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// normalizeOnce runs every step of Normalize once.
func normalizeOnce(s string) string {
	s = norm.NFKC.String(s)
	s = mapRunes(s)
	return trimEdges(s)
}

// mapRunes folds case, straightens quotes, collapses white space and drops
// invisible runes, in one pass. It returns s itself when nothing changes.
func mapRunes(s string) string {
	var b []byte   // nil until the output differs from s
	space := false // a space is pending; while b is nil, it is s[i-1]
	start := func(i int) {
		b = append(make([]byte, 0, len(s)), s[:i]...)
		if space {
			b = b[:len(b)-1] // written again before the next rune
		}
	}
	for i, r := range s {
		m := mapRune(r)
		switch m {
		case drop:
			if b == nil {
				start(i)
			}
			continue
		case ' ':
			if b == nil && (r != ' ' || space) {
				start(i)
			}
			space = true
			continue
		}
		if b == nil && m != r {
			start(i)
		}
		if b != nil {
			if space {
				b = append(b, ' ')
			}
			b = utf8.AppendRune(b, m)
		}
		space = false
	}
	if b == nil {
		return s // at most one trailing space, which trimEdges drops
	}
	return string(b)
}

// drop is what mapRune returns for a rune to remove.
const drop = -1

// mapRune maps one rune for mapRunes: ' ' for white space and commas, drop
// for invisible runes, the folded and straightened rune otherwise.
func mapRune(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r':
			return ' '
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	case unicode.IsSpace(r):
		return ' '
	}
	switch r {
	case '\u200b', '\u2060', '\ufeff', '\u00ad', '\u0640': // zero-width, soft hyphen, tatweel
		return drop
	case '、', '،', '\u060d': // ideographic and Arabic commas
		return ' '
	case '‘', '’', '‚', '‛', '′', '‹', '›':
		return '\''
	case '“', '”', '„', '‟', '″', '«', '»', '「', '」', '『', '』':
		return '"'
	}
	if isArabicMark(r) {
		return drop
	}
	return fold(r)
}

// fold maps r to its simple lower-case fold. Going through upper case first
// also folds runes that are lower case already but have a more common
// lower-case twin (ſ → s, ς → σ, ı → i).
func fold(r rune) rune {
	return unicode.ToLower(unicode.ToUpper(r))
}

// isArabicMark reports whether r is an Arabic vowel or reading mark
// (harakat, tanwin, shadda, sukun, dagger alif), which people type or omit
// at will.
func isArabicMark(r rune) bool {
	return ('\u064b' <= r && r <= '\u065f') || r == '\u0670'
}

// trimEdges removes, until none is left, leading and trailing spaces,
// leading openers and mentions, and trailing punctuation. s has had
// mapRunes applied, so its only white space is single ' ' runes.
func trimEdges(s string) string {
	for {
		prev := s
		s = strings.Trim(s, " ")
		s = strings.TrimLeftFunc(s, isOpener)
		s = strings.TrimRightFunc(s, isCloser)
		if rest, ok := cutMention(s); ok {
			s = trimAfterMention(rest)
		}
		if s == prev {
			return s
		}
	}
}

// isOpener reports whether r is dropped from the start of a message:
// quotes, opening brackets, inverted marks and emphasis marks.
func isOpener(r rune) bool {
	switch r {
	case ' ', '"', '\'', '`', '(', '[', '{', '¡', '¿', '*', '_', '~':
		return true
	}
	return false
}

// isCloser reports whether r is dropped from the end of a message: any
// punctuation (which covers quotes, closing brackets and the full stops,
// exclamation and question marks of every script), back quotes, tildes and
// spaces.
func isCloser(r rune) bool {
	return r == ' ' || r == '`' || r == '~' || unicode.IsPunct(r)
}

// trimAfterMention drops the spaces and punctuation that follow a mention
// ("<@1>, stop", "<@1>: stop"), but keeps a command's slash and the "@"
// of a further mention.
func trimAfterMention(s string) string {
	return strings.TrimLeftFunc(s, func(r rune) bool {
		return r != '/' && r != '@' && (r == ' ' || unicode.IsPunct(r))
	})
}

// maxMention bounds the length of a mention token, so that "<@" followed by
// a long text is not scanned as one.
const maxMention = 128

// cutMention reports whether s starts with a platform user mention and
// returns the text after it. s is already folded to lower case.
func cutMention(s string) (rest string, ok bool) {
	if !strings.HasPrefix(s, "<@") {
		return s, false
	}
	i := 2
	if i < len(s) && s[i] == '!' { // Discord nickname mention
		i++
	}
	start := i
	for i < len(s) && i < maxMention && isIDByte(s[i]) {
		i++
	}
	if i == start {
		return s, false
	}
	if i < len(s) && s[i] == '|' { // Slack "<@U123|name>"
		end := strings.IndexByte(s[i:min(len(s), maxMention)], '>')
		if end < 0 {
			return s, false
		}
		return s[i+end+1:], true
	}
	if i < len(s) && s[i] == '>' {
		return s[i+1:], true
	}
	return s, false
}

// isIDByte reports whether c can appear in a Discord or Slack user ID
// (after folding to lower case).
func isIDByte(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'z')
}
