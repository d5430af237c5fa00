package tooldisplay

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxValueChars is about how many code points of one input value or title a
// label shows; longer ones are cut in the middle.
const maxValueChars = 120

// fallbackLabel is the label of a tool call nothing is known about.
const fallbackLabel = "tool call"

// genericTitles are the placeholder titles agents send before the real title
// arrives, lower-cased. Such a title gives way to a label built from the
// input. Keep the list small: a title in it is hidden whenever the input
// has something to show.
var genericTitles = map[string]bool{
	"terminal":  true,
	"read file": true,
	"write":     true,
	"edit":      true,
	"tool":      true,
	"bash":      true,
	"read":      true,
	"fetch":     true,
	"search":    true,
	// Qwen Code's first titles.
	"shell":     true,
	"readfile":  true,
	"writefile": true,
}

// toolCallID matches titles that are really a tool call id (Claude's
// "toolu_…", OpenAI's "call_…" and "fc_…", or a UUID). Such titles are never
// shown.
var toolCallID = regexp.MustCompile(`^(?:(?:toolu|call|fc)_[A-Za-z0-9]{8,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// Input keys that carry the value worth showing, in order of preference.
var (
	commandKeys     = []string{"command", "cmd"}
	pathKeys        = []string{"file_path", "path", "filePath", "notebook_path", "absolute_path"}
	destinationKeys = []string{"destination"}
	queryKeys       = []string{"query", "pattern"}
	urlKeys         = []string{"url"}
)

// verbs is the word before a path, query or URL taken from the input.
var verbs = map[string]string{
	"read":   "Read",
	"edit":   "Edit",
	"delete": "Delete",
	"move":   "Move",
	"search": "Search",
	"fetch":  "Fetch",
}

// Label returns the human label of c: what Summary shows between the mark
// and the status. It is a single line of CommonMark; the package
// documentation describes how it is chosen.
func Label(c Call) string {
	l, _ := LabelOf(c)
	return l
}

// LabelOf is Label, and whether the label is the agent's own title
// (redacted and cut, but its words) rather than one made from the
// tool's input, locations or kind.
func LabelOf(c Call) (label string, title bool) {
	label, src := labelOf(c)
	return label, src == fromTitle || src == fromGenericTitle
}

// Placeholder reports whether Label(c) says nothing about what the tool
// does: a generic title, or the words "tool call". Agents announce tools
// this way before their real title and input arrive.
func Placeholder(c Call) bool {
	_, src := labelOf(c)
	return src == fromGenericTitle || src == fromFallback
}

// labelSource is where a label comes from.
type labelSource uint8

const (
	fromTitle        labelSource = iota // the agent's own, not generic, title
	fromInput                           // the raw input or a location
	fromGenericTitle                    // the agent's generic title
	fromFallback                        // fallbackLabel
)

func labelOf(c Call) (string, labelSource) {
	kind := normalize(c.Kind)
	t := oneLine(c.Title)
	if toolCallID.MatchString(t) {
		t = ""
	}
	if t != "" && !genericTitles[strings.ToLower(t)] {
		return plain(t), fromTitle
	}
	if l := inputLabel(kind, c.RawInput); l != "" {
		return l, fromInput
	}
	// A command's location is the directory it runs in, which says
	// nothing about what it does (opencode's bash: locations [cwd]).
	if kind != "execute" {
		for _, loc := range c.Locations {
			if p := shortPath(loc); p != "" {
				return withVerb(verbs[kind], code(p)), fromInput
			}
		}
	}
	if t != "" {
		return plain(t), fromGenericTitle
	}
	return fallbackLabel, fromFallback
}

// inputLabel builds a label from the raw tool input for kind, or returns ""
// when the input has nothing to show.
func inputLabel(kind string, raw []byte) string {
	in := decodeInput(raw)
	if in == nil {
		return ""
	}
	switch kind {
	case "execute":
		return commandLabel(in)
	case "read", "edit", "delete":
		return pathLabel(kind, in)
	case "move":
		src := shortPath(in.text(pathKeys...))
		dst := shortPath(in.text(destinationKeys...))
		switch {
		case src != "" && dst != "":
			return "Move " + code(src) + " → " + code(dst)
		case src != "":
			return "Move " + code(src)
		case dst != "":
			return "Move to " + code(dst)
		}
		return ""
	case "search":
		return valueLabel("Search", in.text(queryKeys...))
	case "fetch":
		return valueLabel("Fetch", in.text(urlKeys...))
	case "think", "switch_mode":
		return ""
	}
	// other and unknown kinds: whatever the input has, most telling first.
	if l := commandLabel(in); l != "" {
		return l
	}
	if l := pathLabel(kind, in); l != "" {
		return l
	}
	if l := valueLabel("Search", in.text(queryKeys...)); l != "" {
		return l
	}
	return valueLabel("Fetch", in.text(urlKeys...))
}

func commandLabel(in input) string {
	return valueLabel("", in.command())
}

func pathLabel(kind string, in input) string {
	p := shortPath(in.text(pathKeys...))
	if p == "" {
		return ""
	}
	return withVerb(verbs[kind], code(p))
}

// valueLabel returns verb and v as a code span, or "" when v is empty.
func valueLabel(verb, v string) string {
	if v = oneLine(v); v == "" {
		return ""
	}
	return withVerb(verb, code(v))
}

func withVerb(verb, s string) string {
	if verb == "" {
		return s
	}
	return verb + " " + s
}

// plain returns the one-line text s redacted and cut to maxValueChars.
func plain(s string) string {
	return CutMiddle(Redact(s), maxValueChars)
}

// code returns the one-line text s redacted, cut to maxValueChars and set in
// a CommonMark code span whose fence no backticks inside can close.
func code(s string) string {
	return CodeSpan(plain(oneLine(s)))
}

// input is a decoded raw tool input object.
type input map[string]json.RawMessage

// decodeInput decodes raw as a JSON object, or returns nil when it is not one.
func decodeInput(raw []byte) input {
	if len(raw) == 0 {
		return nil
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil
	}
	return in
}

// text returns the first non-blank string value among keys.
func (in input) text(keys ...string) string {
	for _, k := range keys {
		var s string
		if json.Unmarshal(in[k], &s) == nil && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// command returns the command of an execute input: a string, or an argument
// array shown the way a shell user would type it.
func (in input) command() string {
	if s := in.text(commandKeys...); s != "" {
		return s
	}
	for _, k := range commandKeys {
		var args []string
		if json.Unmarshal(in[k], &args) == nil && len(args) > 0 {
			return joinArgs(args)
		}
	}
	return ""
}

// shellFlag matches the flags that make a shell run its next argument as a
// script: -c, -lc, -ic and the like.
var shellFlag = regexp.MustCompile(`^-[a-z]*c$`)

// joinArgs joins an argument array with spaces, quoting arguments that
// contain white space. A shell wrapper such as ["bash", "-lc", "go test"]
// is shown as its script alone.
func joinArgs(args []string) string {
	if len(args) == 3 && shellFlag.MatchString(args[1]) {
		switch path.Base(args[0]) {
		case "sh", "bash", "zsh", "dash", "ksh", "fish":
			return args[2]
		}
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsFunc(a, unicode.IsSpace) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}

// shortPath returns the last two elements of a file path, which name the
// file well enough for a chat line. Both / and \ separate elements; "." and
// empty elements are dropped.
func shortPath(p string) string {
	p = oneLine(p)
	elems := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	elems = slices.DeleteFunc(elems, func(e string) bool { return e == "." })
	switch len(elems) {
	case 0:
		return p // "/" or ".": nothing shorter to say
	case 1:
		return elems[0]
	}
	return elems[len(elems)-2] + "/" + elems[len(elems)-1]
}

// oneLine returns s as valid UTF-8 on a single line: white space runs
// (line breaks included) become one space, control and bidirectional
// formatting characters are dropped, and the ends are trimmed. A long s
// loses most of its middle first (see clip).
func oneLine(s string) string {
	return collapse(clip(s))
}

// clipBytes is about how many bytes clip keeps from each end of a long text.
// A label shows at most maxValueChars code points of a value, about half
// from each end, so a 100 KB heredoc costs no more than a short command.
const clipBytes = 4096

// clip returns s without most of its middle when s is much longer than any
// label, so that collapsing, redacting and cutting it stay cheap. It cuts
// only between two ASCII characters (other than CR LF), where there is
// always a grapheme cluster boundary, so the ends a label shows are
// segmented as in s. When no such place is near, s is returned whole.
func clip(s string) string {
	if len(s) <= 3*clipBytes {
		return s
	}
	head := asciiBoundary(s, clipBytes)
	tail := asciiBoundary(s, len(s)-clipBytes)
	if head < 0 || tail < 0 {
		return s
	}
	return s[:head] + ellipsis + s[tail:]
}

// asciiBoundary returns the first i within clipBytes from `from` where
// s[i-1] and s[i] are ASCII and not CR LF, or -1.
func asciiBoundary(s string, from int) int {
	for i := max(from, 1); i < len(s) && i < from+clipBytes; i++ {
		if s[i-1] < utf8.RuneSelf && s[i] < utf8.RuneSelf && (s[i-1] != '\r' || s[i] != '\n') {
			return i
		}
	}
	return -1
}

// collapse is oneLine without the clip.
func collapse(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
