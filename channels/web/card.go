package web

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/tooldisplay"
)

// permCard is a permission prompt's text (as session renders it for
// every platform) taken apart for the page's card: the title, the files,
// the input as fields, the rest (diffs, the tool's text) as HTML, and the
// outcome once answered. Everything the text shows is in the card; a text
// of another shape gets no card and shows as it is.
type permCard struct {
	// Mark is the emoji of the tool's kind.
	Mark  string `json:"mark"`
	Title string `json:"title"`
	Kind  string `json:"kind,omitempty"`
	// Files are the lines of "Files:": a path and what follows it (a line
	// number, the outside-the-working-directory flag).
	Files []cardFile `json:"files,omitempty"`
	// Fields are the input's fields in order, without those whose value
	// is a path Files shows; Input is the input when it is not a JSON
	// object.
	Fields []cardField `json:"fields,omitempty"`
	Input  string      `json:"input,omitempty"`
	// HTML is the rest of the text, rendered (diffs coloured).
	HTML string `json:"html,omitempty"`
	// Outcome is the answer's line ("✅ Allow once — chosen by Ann").
	Outcome string `json:"outcome,omitempty"`
}

type cardFile struct {
	Path string `json:"path"`
	Note string `json:"note,omitempty"`
}

type cardField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

const permHead = "🔐 **Permission needed** — "

var (
	kindSuffix = regexp.MustCompile(` \(([a-z_]+)\)$`)
	// codeSpanAt matches a code span at the start of a string (as
	// tooldisplay.CodeSpan writes it) and what follows.
	codeSpanAt = regexp.MustCompile("^(`+)")
	outcomeRe  = regexp.MustCompile(`\n\n((?:✅|❌|⏱️|⏹️)[^\n]*)$`)
)

// cardFor returns the card of a permission message's text, or nil.
func cardFor(kind, text string) *permCard {
	if kind != string(channels.KindPermission) || !strings.HasPrefix(text, permHead) {
		return nil
	}
	c := &permCard{}
	if m := outcomeRe.FindStringSubmatchIndex(text); m != nil {
		c.Outcome = text[m[2]:m[3]]
		text = text[:m[0]]
	}
	lines := strings.Split(text, "\n")
	c.Title = strings.TrimPrefix(lines[0], permHead)
	if m := kindSuffix.FindStringSubmatch(c.Title); m != nil {
		c.Kind = m[1]
		c.Title = strings.TrimSuffix(c.Title, m[0])
	}
	c.Mark = tooldisplay.Mark(c.Kind)
	i := 1
	if i < len(lines) && lines[i] == "Files:" {
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "• "); i++ {
			path, note, ok := codeSpan(strings.TrimPrefix(lines[i], "• "))
			if !ok {
				return nil
			}
			c.Files = append(c.Files, cardFile{Path: path, Note: strings.TrimSpace(note)})
		}
	}
	if i < len(lines) && strings.HasPrefix(lines[i], "Input: ") {
		in, rest, ok := codeSpan(strings.TrimPrefix(lines[i], "Input: "))
		if !ok || rest != "" {
			return nil
		}
		fields, ok := objectFields(in)
		if ok {
			for _, f := range fields {
				if !c.showsFile(f.Value) {
					c.Fields = append(c.Fields, f)
				}
			}
		} else {
			c.Input = in
		}
		i++
	}
	rest := lines[i:]
	if len(c.Files) == 1 && len(rest) > 0 {
		// A diff's path line that repeats the one file: shown once.
		if p, note, ok := codeSpan(rest[0]); ok && p == c.Files[0].Path && strings.TrimSpace(note) == c.Files[0].Note {
			rest = rest[1:]
		}
	}
	if rest := strings.Join(rest, "\n"); strings.TrimSpace(rest) != "" {
		c.HTML = renderMarkdown(rest)
	}
	return c
}

// showsFile reports whether p is one of the card's files.
func (c *permCard) showsFile(p string) bool {
	for _, f := range c.Files {
		if f.Path == p {
			return true
		}
	}
	return false
}

// codeSpan takes apart s, which starts with a code span: its content and
// the text after it.
func codeSpan(s string) (content, after string, ok bool) {
	m := codeSpanAt.FindString(s)
	if m == "" {
		return "", "", false
	}
	end := strings.Index(s[len(m):], m)
	if end < 0 {
		return "", "", false
	}
	content = s[len(m) : len(m)+end]
	if len(content) >= 2 && content[0] == ' ' && content[len(content)-1] == ' ' && strings.Trim(content, " ") != "" {
		content = content[1 : len(content)-1]
	}
	return content, s[len(m)+end+len(m):], true
}

// objectFields returns the fields of a JSON object in their order: a
// string as it is, anything else as compact JSON.
func objectFields(s string) ([]cardField, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []cardField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			var b bytes.Buffer
			if json.Compact(&b, raw) != nil {
				return nil, false
			}
			v = b.String()
		}
		out = append(out, cardField{Name: name, Value: v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // more after the object
	}
	return out, true
}
