package session

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sysmsg"
)

// pushEnd queues the outputs of a turn's end. The final notice of a
// stopped turn (the projector's, see Projector.StopTurn) takes the place
// of its "Stopping…" notice ack (edited in place where the channel can
// edit), in order before the TurnEnd, which is last.
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

func displayName(a channels.Author) string { return sysmsg.Who(a.Name, a.ID) }

func stopTyping(l *dispatch.Lane) { l.StopTyping() }
