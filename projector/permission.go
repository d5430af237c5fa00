package projector

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/tooldisplay"
)

// PermissionOption is one answer a permission request offers.
type PermissionOption struct {
	ID   string
	Name string
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string
}

// Prompt is a permission prompt as people see it: its text and its
// buttons. session hands it to the channel as a channels.Choice.
type Prompt struct {
	Text    string
	Options []PromptButton
}

// PromptButton is one option of a Prompt. ID is the option's ACP id.
type PromptButton struct {
	ID    string
	Label string
	Style string // "primary", "danger" or ""
}

// PermissionPrompt renders a permission request about tu offering opts,
// from an agent working in cwd ("" when unknown), as the prompt people
// answer (see renderPermission for what it shows).
func PermissionPrompt(tu ToolUpdate, opts []PermissionOption, cwd string) Prompt {
	p := Prompt{Text: renderPermission(tu, cwd), Options: make([]PromptButton, 0, len(opts))}
	for _, o := range opts {
		p.Options = append(p.Options, PromptButton{ID: o.ID, Label: o.Name, Style: optionStyle(o.Kind)})
	}
	return p
}

func optionStyle(kind string) string {
	switch {
	case strings.HasPrefix(kind, "allow"):
		return "primary"
	case strings.HasPrefix(kind, "reject"):
		return "danger"
	}
	return ""
}

// PermissionTitle is a one-line description of the tool a permission
// request is about. Where it is the agent's own title it is marked as
// the agent's (AgentAsks), so that no title can pass for the gateway's
// own words.
func PermissionTitle(tu ToolUpdate) string {
	locs := make([]string, 0, len(tu.Locations))
	for _, l := range tu.Locations {
		locs = append(locs, l.Path)
	}
	l, title := tooldisplay.LabelOf(tooldisplay.Call{Kind: tu.Kind, Title: tu.Title, RawInput: tu.RawInput, Locations: locs})
	if !title {
		return l
	}
	return AgentAsks(l)
}

// AgentAsks marks title as the agent's words: attributed, with the
// gateway's leading mark taken off, its invisible characters shown
// (tooldisplay.Visible), and set in a code span, where nothing in it is
// read as Markdown (a link, bold text, a mention).
func AgentAsks(title string) string {
	body := sysmsg.Unmark(title)
	if body == "" {
		body = title
	}
	return "Agent asks: " + tooldisplay.CodeSpan(tooldisplay.Visible(body))
}

// maxDiffLines is how many lines of a diff a prompt shows; it says how
// many more there are.
const maxDiffLines = 30

// outsideMark flags a path outside the agent's working directory.
const outsideMark = "⚠️ outside the working directory"

// renderPermission renders the request about tu so that people see what they
// allow: the tool, every path it names (the locations and the path fields
// of its input), flagging those outside cwd, the agent's working directory
// ("" when unknown: nothing is flagged), its whole input, and its content
// and diffs. Nothing here cuts the input: dispatch fits the text to the
// channel and says what it had to hide, and where the whole text is. Long
// runs of white space and invisible characters, which could hide part of
// a command, are shown as markers (tooldisplay.Visible); the input is set
// in a code span nothing inside can close, so no part of it is read as
// Markdown (a spoiler, a link).
func renderPermission(tu ToolUpdate, cwd string) string {
	var b strings.Builder
	b.WriteString("🔐 **Permission needed** — ")
	b.WriteString(PermissionTitle(tu))
	if tu.Kind != "" {
		b.WriteString(" (" + tu.Kind + ")")
	}
	if paths := toolPaths(tu); len(paths) > 0 {
		b.WriteString("\nFiles:")
		for _, p := range paths {
			b.WriteString("\n• " + tooldisplay.CodeSpan(tooldisplay.Visible(p.Path)))
			if p.Line > 0 {
				b.WriteString(" line " + strconv.Itoa(p.Line))
			}
			if outside(cwd, p.Path) {
				b.WriteString(" " + outsideMark)
			}
		}
	}
	if in := CompactJSON(tu.RawInput); in != "" && in != "{}" {
		b.WriteString("\nInput: " + tooldisplay.CodeSpan(tooldisplay.Visible(tooldisplay.Redact(in))))
	}
	for _, c := range tu.Content {
		switch c.Type {
		case "diff":
			b.WriteString("\n" + renderDiff(c, cwd))
		case "content":
			if c.Text != "" {
				b.WriteString("\n" + tooldisplay.Visible(c.Text))
			}
		}
	}
	return b.String()
}

// inputPathKeys are the fields of a tool's raw input that name a file.
var inputPathKeys = []string{"file_path", "path", "filePath", "notebook_path", "absolute_path", "destination", "cwd"}

// toolPaths returns the paths the tool names: its locations, then the
// path fields of its raw input, each once.
func toolPaths(tu ToolUpdate) []Location {
	var out []Location
	seen := map[string]bool{}
	for _, l := range tu.Locations {
		if l.Path != "" && !seen[l.Path] {
			seen[l.Path] = true
			out = append(out, l)
		}
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(tu.RawInput, &in) != nil {
		return out
	}
	for _, k := range inputPathKeys {
		var p string
		if json.Unmarshal(in[k], &p) == nil && p != "" && !seen[p] {
			seen[p] = true
			out = append(out, Location{Path: p})
		}
	}
	return out
}

// outside reports whether path p lies outside directory dir; a relative p
// is taken relative to dir. It compares cleaned paths and follows no
// symbolic links. With dir unknown ("") nothing is outside.
func outside(dir, p string) bool {
	if dir == "" || p == "" {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// CompactJSON writes raw JSON on one line, without HTML escaping; raw
// that is not JSON is returned as it is.
func CompactJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	// Without HTML escaping: "&& curl" must read as it will run, not as
	// "\u0026\u0026 curl".
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CutBytes cuts s to at most max bytes, at a character's start, and says
// how many bytes it left out.
func CutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n… (" + strconv.Itoa(len(s)-cut) + " more bytes)"
}

// renderDiff shows a diff block as removed and added lines in a fence,
// its path flagged when outside cwd.
func renderDiff(c ToolContent, cwd string) string {
	var lines []string
	for _, l := range splitLines(c.OldText) {
		lines = append(lines, "- "+tooldisplay.Visible(l))
	}
	for _, l := range splitLines(c.NewText) {
		lines = append(lines, "+ "+tooldisplay.Visible(l))
	}
	more := 0
	if len(lines) > maxDiffLines {
		more = len(lines) - maxDiffLines
		lines = lines[:maxDiffLines]
	}
	var b strings.Builder
	b.WriteString(tooldisplay.CodeSpan(tooldisplay.Visible(c.Path)))
	if outside(cwd, c.Path) {
		b.WriteString(" " + outsideMark)
	}
	b.WriteString("\n```diff\n")
	for _, l := range lines {
		b.WriteString(strings.ReplaceAll(l, "```", "`‵`") + "\n")
	}
	if more > 0 {
		fmt.Fprintf(&b, "… %d more lines\n", more)
	}
	b.WriteString("```")
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
