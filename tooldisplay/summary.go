package tooldisplay

import "strings"

// Call is the merged state of one ACP tool call.
type Call struct {
	Kind      string   // ACP kind: read, edit, delete, move, search, execute, think, fetch, switch_mode, other ("" = other)
	Title     string   // may be generic ("Terminal", "Read File") or empty
	RawInput  []byte   // raw JSON object of the tool input, may be nil, "{}" or not an object
	Status    string   // "pending", "in_progress", "completed", "failed", "cancelled", or ""
	Locations []string // file paths the tool touches, may be empty
}

// marks maps an ACP tool kind to the emoji that starts its line.
// Kinds not listed get the mark of "other".
var marks = map[string]string{
	"execute":     "🛠️",
	"read":        "📖",
	"edit":        "✏️",
	"delete":      "🗑️",
	"move":        "📦",
	"search":      "🔍",
	"think":       "💭",
	"fetch":       "🌐",
	"switch_mode": "🔀",
	"other":       "🔧",
}

// statusWords maps an ACP tool call status to the word shown for it.
var statusWords = map[string]string{
	"pending":     "pending",
	"in_progress": "running",
	"completed":   "done",
	"failed":      "failed",
	"cancelled":   "cancelled",
}

// Summary renders the line for c: "<mark> <label> · <status>", uncut.
// Callers cut it to their own limit with [Cut]. The line is a single line of
// valid UTF-8 and never empty; the package documentation describes it.
func Summary(c Call) string {
	var b strings.Builder
	b.WriteString(mark(c.Kind))
	b.WriteByte(' ')
	b.WriteString(Label(c))
	if w := statusWords[normalize(c.Status)]; w != "" {
		b.WriteString(" · ")
		b.WriteString(w)
	}
	return b.String()
}

// mark returns the emoji for an ACP tool kind.
func mark(kind string) string {
	if m, ok := marks[normalize(kind)]; ok {
		return m
	}
	return marks["other"]
}

// normalize folds the spelling of an ACP enum value, so that " Completed"
// and "completed" are the same status.
func normalize(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// Mark returns the emoji that starts the line of a tool of ACP kind
// kind (that of "other" for a kind not known).
func Mark(kind string) string { return mark(kind) }
