package channels

import "strings"

// TrimLead returns Markdown text as it begins a message on a platform: an
// agent's text often resumes after a tool call with a space (" Second
// part."), which would then open the new message. The one to three spaces
// a message begins with are dropped when text follows on that line
// (Markdown ignores them anyway); four or more (an indented code block),
// a tab, and line breaks are kept, so that the messages of a text split
// at a paragraph still add up to it. Adapters apply it to what they post
// and edit; the text dispatch delivers (and replay records) stays the
// agent's, exactly.
func TrimLead(text string) string {
	rest := strings.TrimLeft(text, " ")
	n := len(text) - len(rest)
	if n < 1 || n > 3 || rest == "" {
		return text
	}
	switch rest[0] {
	case '\t', '\n', '\r':
		return text
	}
	return rest
}
