package projector

// Reasons an update showed nothing, as Suppressed returns them.
const (
	SuppressedOutsideTurn = "outside_turn" // not in a turn (history, stray)
	SuppressedHidden      = "hidden"       // its tag is hidden, or metaMode is off
	SuppressedBudget      = "budget"       // maxTurnChars or maxMetaEventsPerTurn reached
	SuppressedEmpty       = "empty"        // a chunk that adds no text (empty, a repeat, a snapshot already shown)
	SuppressedUnchanged   = "unchanged"    // nothing visible changed (a repeated snapshot, usage, a tool's middle state in minimal mode)
	SuppressedState       = "state"        // session state only (commands, modes, a user's own words)
)

// Suppressed returns why the last Apply showed nothing, "" if it showed
// something. It does not allocate.
func (p *Projector) Suppressed() string { return p.suppressed }

// why classifies an update that produced no output.
func (p *Projector) why(u *Update) string {
	tag := u.Tag
	if tag == TagAgentMessageChunk && u.Thought {
		tag = TagAgentThoughtChunk
	}
	switch tag {
	case TagAvailableCommands, TagUserMessageChunk:
		return SuppressedState
	}
	if tag == TagNotice && !p.inTurn && p.visible[TagNotice] {
		return SuppressedBudget // NoticesPerMinute
	}
	if !p.inTurn {
		return SuppressedOutsideTurn
	}
	if tag != TagUnknown && !p.visible[tag] {
		return SuppressedHidden
	}
	switch tag {
	case TagAgentMessageChunk:
		if p.turn.truncated {
			return SuppressedBudget
		}
		return SuppressedEmpty
	case TagAgentThoughtChunk:
		return SuppressedEmpty
	case TagToolCall, TagToolCallUpdate:
		if p.level == levelOff {
			return SuppressedHidden
		}
	}
	if p.turn.metaCapped {
		return SuppressedBudget
	}
	return SuppressedUnchanged
}
