package session

import (
	"fmt"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sysmsg"
)

// pushEnd queues the outputs of a turn's end. The final notice of a
// stopped turn replaces its "Stopping…" notice (edited in place where the
// channel can edit), in order before the TurnEnd, which is last.
func (t *thread) pushEnd(ack string, outs []projector.Output) {
	if ack == "" || len(outs) < 2 {
		t.runner.Push(outs...)
		return
	}
	n, ok := outs[len(outs)-2].(projector.Notice)
	if !ok || n.Reason != projector.NoticeTurnStopped {
		t.runner.Push(outs...)
		return
	}
	t.runner.Push(outs[:len(outs)-2]...)
	t.runner.ReplaceNotice(ack, n.Text)
	t.runner.Push(outs[len(outs)-1])
}

// stopNotice replaces the projector's end-of-turn notice of a stopped
// turn with one that names who stopped it.
func (t *thread) stopNotice(o TurnOutcome, outs []projector.Output) []projector.Output {
	var text string
	if o.Interrupted {
		text = "Interrupted by a new message from " + o.Stopper + "."
	} else {
		text = "Stopped by " + o.Stopper + "."
	}
	if o.Killed {
		text += fmt.Sprintf(" The agent did not stop within %s, so it was restarted.", t.m.cfg.Grace)
	}
	kept := outs[:0]
	for _, o := range outs {
		if n, ok := o.(projector.Notice); ok && (n.Reason == projector.NoticeTurnStopped || n.Reason == projector.NoticeTurnFailed) {
			continue
		}
		kept = append(kept, o)
	}
	// Before the TurnEnd, which is last.
	n := len(kept)
	kept = append(kept, nil)
	copy(kept[n:], kept[n-1:])
	kept[n-1] = projector.Notice{Text: sysmsg.Prefix(text), Reason: projector.NoticeTurnStopped}
	return kept
}

func displayName(a channels.Author) string {
	if a.Name != "" {
		return a.Name
	}
	if a.ID != "" {
		return a.ID
	}
	return "someone"
}

func stopTyping(l *dispatch.Lane) { l.StopTyping() }
