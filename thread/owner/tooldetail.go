package owner

import (
	"strconv"
	"strings"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/tooldisplay"
)

// maxToolDetail bounds the input and the output a tool's details carry.
const maxToolDetail = 8 << 10

// toolDetail returns what a tool update shows, for adapters that show a
// tool's details: its input and raw output redacted like a permission
// prompt's input, invisible characters made visible.
func toolDetail(tu projector.ToolUpdate) channels.ToolDetail {
	var d channels.ToolDetail
	if in := projector.CompactJSON(tu.RawInput); in != "" && in != "{}" {
		d.Input = cutDetail(tooldisplay.Visible(tooldisplay.Redact(in)))
	}
	var texts []string
	for _, c := range tu.Content {
		switch c.Type {
		case "content":
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		case "diff":
			d.Diffs = append(d.Diffs, channels.Diff{Path: tooldisplay.Visible(c.Path), Old: cutDetail(tooldisplay.Visible(c.OldText)), New: cutDetail(tooldisplay.Visible(c.NewText))})
		}
	}
	out := strings.Join(texts, "\n")
	if out == "" {
		out = projector.RawOutputText(tu.RawOutput)
	}
	if out != "" {
		d.Output = cutDetail(tooldisplay.Visible(tooldisplay.Redact(out)))
	}
	for _, l := range tu.Locations {
		p := tooldisplay.Visible(l.Path)
		if l.Line > 0 {
			p += ":" + strconv.Itoa(l.Line)
		}
		d.Locations = append(d.Locations, p)
	}
	return d
}

// cutDetail cuts s to maxToolDetail bytes, saying so.
func cutDetail(s string) string { return projector.CutBytes(s, maxToolDetail) }

// compactionDetail gives adapters that show tool details the summary of
// the compaction u updates, beside its line (projector.CompactionKey).
func (t *Thread) compactionDetail(u *projector.Update) {
	if u.Tag != projector.TagCompaction && u.Tag != projector.TagCompactionChunk {
		return
	}
	if !t.runner.Caps().ToolDetail {
		return
	}
	sum, ok := t.proj.CompactionSummary(u.Compaction.ID)
	if !ok || sum == "" {
		return
	}
	t.runner.ToolDetail(projector.CompactionKey+u.Compaction.ID, channels.ToolDetail{Output: cutDetail(tooldisplay.Visible(tooldisplay.Redact(sum)))})
}
