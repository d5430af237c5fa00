// Package sysmsg holds the gateway's own voice: the notices that come from
// the gateway itself rather than from the agent, as typed outcomes that
// render themselves (notices.go, all in testdata/messages.txtar), and the
// mark they carry.
//
// Every such notice starts with exactly one [Mark] ("⚙️ "), so readers can
// tell the gateway's voice apart from the agent's in a chat thread. [Prefix]
// is idempotent: text that already carries the mark, in any of the spellings
// agents and people type (with or without the emoji variation selector
// U+FE0F, with or without the following space), keeps a single mark.
package sysmsg

import "strings"

// Mark is the prefix of every system notice: the gear emoji U+2699 with the
// emoji variation selector U+FE0F, and one space.
const Mark = "\u2699\uFE0F "

const (
	gear = "\u2699"
	vs16 = "\uFE0F" // emoji variation selector
)

// Prefix returns s trimmed of surrounding white space and prefixed with
// exactly one Mark. Leading gears already present in s, with or without the
// variation selector and the following space, are folded into that one mark,
// so Prefix(Prefix(s)) == Prefix(s).
//
// Prefix returns "" when s holds no text besides white space and gears: an
// empty notice is not worth a mark.
func Prefix(s string) string {
	body := Unmark(s)
	if body == "" {
		return ""
	}
	return Mark + body
}

// Unmark returns s trimmed of surrounding white space and of the leading
// marks Prefix folds, in any of their spellings: text of someone else's
// (an agent's title) that must not pass for the gateway's voice.
func Unmark(s string) string {
	body := strings.TrimSpace(s)
	for strings.HasPrefix(body, gear) {
		body = strings.TrimPrefix(body, gear)
		for strings.HasPrefix(body, vs16) {
			body = strings.TrimPrefix(body, vs16)
		}
		body = strings.TrimSpace(body)
	}
	return body
}
