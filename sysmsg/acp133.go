package sysmsg

import (
	"fmt"
	"strings"

	"github.com/acpgw/gateway/tooldisplay"
)

// What the gateway says of ACP 1.33's notices and compactions.

// Bounds of the agent's text an AgentNotice shows, in code points.
const (
	maxNoticeTitle       = 200
	maxNoticeDescription = 600
)

// AgentNotice is a notice the agent sent (ACP notice): its Severity
// ("info", "warning", "error"; anything else reads as info), Title and
// Description (may be ""), the agent's plain text, shown as its words
// on one line each, where nothing reads as Markdown or a mention.
type AgentNotice struct {
	Severity, Title, Description string
}

func (n AgentNotice) Body() string {
	title := agentWords(n.Title, maxNoticeTitle)
	desc := agentWords(n.Description, maxNoticeDescription)
	if title == "" {
		title, desc = desc, ""
	}
	if title == "" {
		return ""
	}
	var lead string
	switch n.Severity {
	case "warning":
		lead = "⚠️ Warning from the agent: "
	case "error":
		lead = "🛑 Error from the agent: "
	default:
		lead = "ℹ️ Notice from the agent: "
	}
	if desc == "" {
		return lead + title
	}
	return lead + title + " — " + desc
}

// agentWords is the agent's text s on one line, cut to max code points,
// invisible characters shown, in a code span ("" for blank text).
func agentWords(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	return tooldisplay.CodeSpan(tooldisplay.Visible(tooldisplay.Cut(s, max)))
}

// NoticesHidden: the agent sent notices outside a turn faster than
// PerMinute a minute; the next ones are not shown until it slows down.
type NoticesHidden struct{ PerMinute int }

func (n NoticesHidden) Body() string {
	return fmt.Sprintf("The agent sends notices faster than %d a minute: the next ones are hidden until it slows down.", n.PerMinute)
}

// Compaction is the line of one context compaction (ACP
// compaction_update) in its State: "in_progress" (or "": not said yet),
// "completed", "failed" (Err: the agent's error, may be "") or
// "cancelled".
type Compaction struct {
	State string
	Err   string
}

// maxCompactionErr bounds the agent's error a failed compaction shows.
const maxCompactionErr = 300

func (c Compaction) Body() string {
	switch c.State {
	case "completed":
		return "🗜️ Context compacted."
	case "failed":
		if e := agentWords(c.Err, maxCompactionErr); e != "" {
			return "🗜️ Compacting the context failed: " + e
		}
		return "🗜️ Compacting the context failed."
	case "cancelled":
		return "🗜️ Compacting the context was cancelled."
	}
	return "🗜️ Compacting the context…"
}
