package slack

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mrkdwn converts markdown as agents write it (CommonMark with GitHub's
// tables, task lists and strikethrough) to Slack's mrkdwn:
//
//   - **bold** and __bold__ become *bold*; *italic* and _italic_ become
//     _italic_; ***both*** becomes *_both_*; ~~struck~~ becomes ~struck~;
//   - [label](https://…) and ![alt](https://…) become <https://…|label>;
//     a link to a relative path keeps only its label; <https://…>
//     autolinks stay links; bare URLs are left for Slack to link;
//   - headings become bold lines; "-", "*" and "+" list items become
//     bullets (•, ◦, ▪ by depth) with task boxes as ☐ and ☑; numbered
//     items and block quotes stay; thematic breaks become a line;
//   - code fences become ``` blocks without their info string (Slack
//     shows no language), closed at the end when the text leaves one
//     open; tables become code blocks so their columns stay aligned;
//     inline code stays `code`;
//   - &, < and > are escaped everywhere, so no text can form a Slack
//     mention or link by accident ("<!channel>" stays text).
//
// The markdown block of Block Kit would render markdown on Slack's side,
// but its output cannot be checked here, and the text field (notifications,
// and clients without blocks) still needs mrkdwn; so the adapter converts
// itself. Invalid UTF-8 is replaced; the output is always valid UTF-8.
func Mrkdwn(md string) string {
	md = strings.ToValidUTF8(md, "\uFFFD")
	md = strings.ReplaceAll(md, "\r\n", "\n")
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	var fence *fenceInfo
	prevPara := false // the last output line is paragraph text (for setext headings)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence != nil {
			if fence.closes(line) {
				out = append(out, "```")
				fence = nil
				continue
			}
			out = append(out, escapeCode(fence.strip(line)))
			continue
		}
		if f, ok := openFence(line); ok {
			fence = &f
			out = append(out, "```")
			prevPara = false
			continue
		}
		if n := tableRows(lines[i:]); n > 0 {
			out = append(out, "```")
			for _, row := range lines[i : i+n] {
				out = append(out, escapeCode(strings.TrimRight(row, " \t")))
			}
			out = append(out, "```")
			i += n - 1
			prevPara = false
			continue
		}
		if prevPara && setextUnderline.MatchString(line) {
			out[len(out)-1] = bold(strings.TrimSpace(out[len(out)-1]))
			prevPara = false
			continue
		}
		converted, para := convertLine(line)
		out = append(out, converted)
		prevPara = para
	}
	if fence != nil {
		if len(out) > 0 && out[len(out)-1] == "" && strings.HasSuffix(md, "\n") {
			// Keep the text's final line break after the closing fence.
			out[len(out)-1] = "```"
			out = append(out, "")
		} else {
			out = append(out, "```")
		}
	}
	return strings.Join(out, "\n")
}

// fenceInfo is an open code fence.
type fenceInfo struct {
	char   byte // '`' or '~'
	n      int  // length of the opening run
	indent int  // spaces before the opening run
}

// openFence reports whether line opens a code fence: up to three spaces,
// then three or more backticks (with no backtick in the info string) or
// tildes.
func openFence(line string) (fenceInfo, bool) {
	indent := leadingSpaces(line)
	if indent > 3 {
		return fenceInfo{}, false
	}
	rest := line[indent:]
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return fenceInfo{}, false
	}
	c := rest[0]
	n := runLen(rest, 0, c)
	if n < 3 || (c == '`' && strings.IndexByte(rest[n:], '`') >= 0) {
		return fenceInfo{}, false
	}
	return fenceInfo{char: c, n: n, indent: indent}, true
}

// closes reports whether line closes the fence: up to three spaces, a run
// of the fence character at least as long, then only spaces.
func (f fenceInfo) closes(line string) bool {
	indent := leadingSpaces(line)
	if indent > 3 {
		return false
	}
	rest := line[indent:]
	n := runLen(rest, 0, f.char)
	return n >= f.n && strings.TrimRight(rest[n:], " \t") == ""
}

// strip removes up to the fence's indentation from a content line.
func (f fenceInfo) strip(line string) string {
	return line[min(leadingSpaces(line), f.indent):]
}

var (
	setextUnderline = regexp.MustCompile(`^ {0,3}(=+|-{2,}) *$`)
	thematicBreak   = regexp.MustCompile(`^ {0,3}([-*_])( *[-*_]){2,} *$`)
	atxHeading      = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	bulletItem      = regexp.MustCompile(`^([ \t]*)[-*+][ \t]+(.*)$`)
	orderedItem     = regexp.MustCompile(`^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$`)
	blockQuote      = regexp.MustCompile(`^ {0,3}>[ ]?(.*)$`)
	tableDelimiter  = regexp.MustCompile(`^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$`)
)

// bullets are the bullet characters by list depth.
var bullets = []string{"•", "◦", "▪"}

// convertLine converts one line outside code. It reports whether the line
// is paragraph text (which a setext underline turns into a heading).
func convertLine(line string) (string, bool) {
	if strings.TrimSpace(line) == "" {
		return "", false
	}
	if thematicBreak.MatchString(line) {
		return "──────────", false
	}
	if m := atxHeading.FindStringSubmatch(line); m != nil {
		if strings.TrimSpace(m[2]) == "" {
			return "", false
		}
		return bold(m[2]), false
	}
	if m := blockQuote.FindStringSubmatch(line); m != nil {
		inner, _ := convertLine(m[1])
		return strings.TrimRight("> "+inner, " "), false
	}
	if m := bulletItem.FindStringSubmatch(line); m != nil {
		depth := indentWidth(m[1]) / 2
		text := m[2]
		box := ""
		switch {
		case strings.HasPrefix(text, "[ ] "):
			box, text = "☐ ", text[4:]
		case strings.HasPrefix(text, "[x] "), strings.HasPrefix(text, "[X] "):
			box, text = "☑ ", text[4:]
		}
		return strings.Repeat("    ", depth) + bullets[min(depth, len(bullets)-1)] + " " + box + inline(text, false), false
	}
	if m := orderedItem.FindStringSubmatch(line); m != nil {
		depth := indentWidth(m[1]) / 2
		return strings.Repeat("    ", depth) + m[2] + ". " + inline(m[3], false), false
	}
	lead := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	return lead + inline(strings.TrimRight(line[len(lead):], " \t"), false), true
}

// bold returns the inline conversion of s as one bold span.
func bold(s string) string {
	s = strings.TrimSpace(inline(s, true))
	if s == "" {
		return ""
	}
	return "*" + s + "*"
}

// tableRows returns the number of lines of a table starting at lines[0]:
// a header row with a "|", a delimiter row, and the rows after them that
// contain a "|". It returns 0 when lines does not start with a table.
func tableRows(lines []string) int {
	if len(lines) < 2 || !strings.Contains(lines[0], "|") || !tableDelimiter.MatchString(lines[1]) ||
		!strings.Contains(lines[1], "-") {
		return 0
	}
	n := 2
	for n < len(lines) && strings.Contains(lines[n], "|") && strings.TrimSpace(lines[n]) != "" {
		n++
	}
	return n
}

// inline converts the inline markdown of one line. In a bold span (inBold)
// bold markers are dropped, since Slack cannot nest bold.
func inline(s string, inBold bool) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && isASCIIPunct(s[i+1]) {
				b.WriteString(escapeText(s[i+1 : i+2]))
				i += 2
				continue
			}
		case '`':
			n := runLen(s, i, '`')
			if j := findRun(s, i+n, '`', n); j >= 0 {
				code := s[i+n : j]
				if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
					code = code[1 : len(code)-1]
				}
				b.WriteString("`" + escapeCode(code) + "`")
				i = j + n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case '!':
			if i+1 < len(s) && s[i+1] == '[' {
				if label, url, end, ok := parseLink(s, i+1); ok {
					b.WriteString(link(url, label))
					i = end
					continue
				}
			}
		case '[':
			if label, url, end, ok := parseLink(s, i); ok {
				b.WriteString(link(url, label))
				i = end
				continue
			}
		case '<':
			if end, ok := autolink(s, i); ok {
				b.WriteString("<" + escapeURL(s[i+1:end]) + ">")
				i = end + 1
				continue
			}
		case 'h':
			if end := bareURL(s, i); end > i {
				b.WriteString(escapeText(s[i:end]))
				i = end
				continue
			}
		case '~':
			if strings.HasPrefix(s[i:], "~~") && runLen(s, i, '~') == 2 {
				if j := findRun(s, i+2, '~', 2); j > i+2 && !isSpace(s[i+2]) && !isSpace(s[j-1]) {
					b.WriteString("~" + inline(s[i+2:j], inBold) + "~")
					i = j + 2
					continue
				}
			}
		case '*', '_':
			if out, end, ok := emphasis(s, i, inBold); ok {
				b.WriteString(out)
				i = end
				continue
			}
			n := runLen(s, i, c)
			b.WriteString(s[i : i+n])
			i += n
			continue
		case '&':
			if ent := knownEntity(s[i:]); ent != "" {
				b.WriteString(ent)
				i += len(ent)
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(escapeText(s[i : i+size]))
		i += size
	}
	return b.String()
}

// emphasis converts the emphasis span opening at s[i] ('*' or '_'), and
// returns the converted span and the index after it.
func emphasis(s string, i int, inBold bool) (string, int, bool) {
	c := s[i]
	n := runLen(s, i, c)
	if n > 3 || !opens(s, i, n) {
		return "", 0, false
	}
	j := i + n
	for {
		k := findRun(s, j, c, n)
		if k < 0 {
			return "", 0, false
		}
		if k > i+n && closes(s, k, n) {
			inner := inline(s[i+n:k], inBold || n >= 2)
			var out string
			switch {
			case n == 1:
				out = "_" + inner + "_"
			case n == 2 && inBold:
				out = inner
			case n == 2:
				out = "*" + inner + "*"
			case inBold:
				out = "_" + inner + "_"
			default:
				out = "*_" + inner + "_*"
			}
			return out, k + n, true
		}
		j = k + n
	}
}

// opens reports whether the run of n delimiters at s[i] can open emphasis:
// it is followed by a non-space, and for "_" not preceded by a letter or
// digit (no emphasis inside snake_case words).
func opens(s string, i, n int) bool {
	if i+n >= len(s) || isSpace(s[i+n]) {
		return false
	}
	if s[i] == '_' && i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// closes reports whether the run of n delimiters at s[k] can close
// emphasis: it follows a non-space, and for "_" is not followed by a letter
// or digit.
func closes(s string, k, n int) bool {
	if k == 0 || isSpace(s[k-1]) {
		return false
	}
	if s[k] == '_' && k+n < len(s) {
		r, _ := utf8.DecodeRuneInString(s[k+n:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// findRun returns the index of the first run of exactly n characters c in
// s at or after from, skipping code spans and backslash escapes, or -1.
func findRun(s string, from int, c byte, n int) int {
	for i := from; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case c:
			m := runLen(s, i, c)
			if m == n {
				return i
			}
			i += m
			continue
		case '`':
			if c != '`' {
				m := runLen(s, i, '`')
				if j := findRun(s, i+m, '`', m); j >= 0 {
					i = j + m
					continue
				}
				i += m
				continue
			}
		}
		i++
	}
	return -1
}

// parseLink parses an inline link "[label](url "title")" starting at the
// "[" at s[i]. It returns the label, the URL and the index after the ")".
func parseLink(s string, i int) (label, url string, end int, ok bool) {
	depth := 0
	j := i
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
			continue
		case '[':
			depth++
		case ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(s) || j+1 >= len(s) || s[j+1] != '(' {
		return "", "", 0, false
	}
	label = s[i+1 : j]
	k := j + 2
	for k < len(s) && s[k] == ' ' {
		k++
	}
	if k < len(s) && s[k] == '<' {
		e := strings.IndexByte(s[k:], '>')
		if e < 0 {
			return "", "", 0, false
		}
		url = s[k+1 : k+e]
		k += e + 1
	} else {
		parens := 0
		start := k
		for ; k < len(s); k++ {
			ch := s[k]
			if ch == '(' {
				parens++
			} else if ch == ')' {
				if parens == 0 {
					break
				}
				parens--
			} else if ch == ' ' || ch == '\t' {
				break
			}
		}
		url = s[start:k]
	}
	// An optional title, then ")".
	for k < len(s) && s[k] == ' ' {
		k++
	}
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		q := s[k]
		e := strings.IndexByte(s[k+1:], q)
		if e < 0 {
			return "", "", 0, false
		}
		k += e + 2
		for k < len(s) && s[k] == ' ' {
			k++
		}
	}
	if k >= len(s) || s[k] != ')' {
		return "", "", 0, false
	}
	return label, url, k + 1, true
}

// link returns the mrkdwn of a link. Only absolute URLs become links; a
// relative one (a file path) keeps its label.
func link(url, label string) string {
	text := plainLabel(label)
	if !hasScheme(url) {
		if text != "" {
			return text
		}
		return escapeText(url)
	}
	if text == "" || text == escapeText(url) {
		return "<" + escapeURL(url) + ">"
	}
	return "<" + escapeURL(url) + "|" + text + ">"
}

// plainLabel returns a link label without emphasis or code markers (Slack
// shows them literally inside a link), escaped.
func plainLabel(label string) string {
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		c := label[i]
		switch {
		case c == '\\' && i+1 < len(label) && isASCIIPunct(label[i+1]):
			i++
			b.WriteByte(label[i])
		case c == '`' || c == '*' || c == '~':
		case c == '_' && (i == 0 || i == len(label)-1 || label[i-1] == '_' || label[i+1] == '_'):
		default:
			b.WriteByte(c)
		}
	}
	return escapeText(strings.TrimSpace(b.String()))
}

// hasScheme reports whether u starts with a URL scheme ("https:",
// "mailto:").
func hasScheme(u string) bool {
	colon := strings.IndexByte(u, ':')
	if colon < 2 {
		return false
	}
	for k := 0; k < colon; k++ {
		c := u[k]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || k > 0 && (c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// autolink reports whether s[i] starts an autolink "<scheme:…>", and the
// index of its ">".
func autolink(s string, i int) (int, bool) {
	end := strings.IndexByte(s[i:], '>')
	if end < 0 {
		return 0, false
	}
	u := s[i+1 : i+end]
	if !hasScheme(u) || strings.ContainsAny(u, " \t<") {
		return 0, false
	}
	return i + end, true
}

// bareURL returns the end of a bare http(s) URL starting at s[i] at a word
// start, or i. Trailing punctuation is not part of it.
func bareURL(s string, i int) int {
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return i
		}
	}
	rest := s[i:]
	if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") {
		return i
	}
	end := i
	for end < len(s) && !isSpace(s[end]) && s[end] != '<' && s[end] != '>' {
		end++
	}
	for end > i && strings.IndexByte(".,;:!?\"'*_~", s[end-1]) >= 0 {
		end--
	}
	if end > i && s[end-1] == ')' && strings.Count(s[i:end], "(") < strings.Count(s[i:end], ")") {
		end--
	}
	if end-i <= len("https://") {
		return i
	}
	return end
}

// knownEntity returns the entity at the start of s if it is one Slack
// decodes (&amp; &lt; &gt;), else "".
func knownEntity(s string) string {
	for _, e := range []string{"&amp;", "&lt;", "&gt;"} {
		if strings.HasPrefix(s, e) {
			return e
		}
	}
	return ""
}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	urlEscaper  = strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C", " ", "%20")
)

// escapeText escapes the characters Slack reserves in text.
func escapeText(s string) string { return textEscaper.Replace(s) }

// escapeCode escapes code: Slack decodes entities inside code too.
func escapeCode(s string) string { return textEscaper.Replace(s) }

// escapeURL escapes a URL inside <…|…>.
func escapeURL(s string) string { return urlEscaper.Replace(s) }

func leadingSpaces(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

// indentWidth is the width of leading whitespace, a tab counting four.
func indentWidth(s string) int {
	w := 0
	for _, c := range s {
		if c == '\t' {
			w += 4
		} else {
			w++
		}
	}
	return w
}

// runLen returns how many times c repeats from s[i].
func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
