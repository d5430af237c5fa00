package projector

import (
	"fmt"
	"unicode/utf8"

	"github.com/acpgw/gateway/sysmsg"
)

// Message projects text the agent posts on purpose (the gateway MCP
// server's send_message) as reply text of the open turn: in order with
// the turn's own text, and within the same budget (Settings.MaxTurnChars
// counts it, cuts it, and the one truncation notice says so). It shows
// whatever the tag settings hide: the agent asked for it to be posted.
// Outside a turn it shows nothing, as the agent's own text: no turn's
// budget or stop would hold it (the session refuses the tool there). It
// is a message of its own: it and the turn text after it are marked
// Text.NewMessage. Text is not added to the turn's reply (TurnText),
// which is what the agent streamed.
func (p *Projector) Message(text string, out []Output) []Output {
	if text == "" || !p.inTurn {
		return out
	}
	t := &p.turn
	if t.truncated {
		return out
	}
	out = p.flushDeferred(out)
	t.posted = true
	return p.budget(t, text, true, out)
}

// budget appends text as turn t's reply text within MaxTurnChars; past
// it, text is cut and the truncation notice follows (once: t is then
// truncated).
func (p *Projector) budget(t *turn, text string, newMsg bool, out []Output) []Output {
	n := utf8.RuneCountInString(text)
	max := p.set.MaxTurnChars
	if max <= 0 || t.visibleRunes+n <= max {
		t.visibleRunes += n
		return append(out, Text{Text: text, NewMessage: newMsg})
	}
	if keep := cutGraphemes(text, max-t.visibleRunes); keep != "" {
		out = append(out, Text{Text: keep, NewMessage: newMsg})
	}
	t.visibleRunes = max
	t.truncated = true
	return append(out, Notice{
		Text:   sysmsg.Prefix(fmt.Sprintf("Reply cut at %d characters (acp.stream.maxTurnChars); the rest of this turn's text is not shown.", max)),
		Reason: NoticeTruncated,
	})
}
