package projector

import (
	"fmt"

	"github.com/acpgw/gateway/sysmsg"
)

// toolCost returns what showing a line of ts costs the meta cap (see the
// package comment); final marks its terminal line.
func (p *Projector) toolCost(ts *toolState, final bool) int {
	switch {
	case !ts.shown && !p.noEdits, !ts.shown && final:
		return 1
	case !ts.shown:
		return 2 // the start line and the room for its terminal line
	case !p.noEdits:
		return 0 // an edit of the message already shown
	case final && ts.reserved:
		return 0
	}
	return 1
}

// spendMeta takes cost meta messages from the turn's budget (see the
// package comment). When the budget cannot pay it refuses (ok false) and,
// the first time, appends a notice. A cost of 0 always passes.
func (p *Projector) spendMeta(cost int, out []Output) ([]Output, bool) {
	if cost == 0 {
		return out, true
	}
	t := &p.turn
	if !t.metaCapped && t.metaCount+cost <= p.set.MaxMetaEventsPerTurn {
		t.metaCount += cost
		return out, true
	}
	if !t.metaCapped {
		t.metaCapped = true
		out = append(out, Notice{
			Text:   sysmsg.Prefix(fmt.Sprintf("More tool and status activity in this turn is not shown (acp.stream.maxMetaEventsPerTurn: %d).", p.set.MaxMetaEventsPerTurn)),
			Reason: NoticeMetaCap,
		})
	}
	return out, false
}
