package dispatch

import (
	"context"
	"time"

	"github.com/acpgw/gateway/channels"
)

// turnEnd is what waits for a turn's end to be delivered: functions to
// run then (AtTurnEnd), and the adapter's channels.TurnEnder.
type turnEnd struct {
	ender channels.TurnEnder
	tell  bool     // the adapter is to be told (Step does the I/O)
	funcs []func() // run when the turn end queued now is delivered
}

// AtTurnEnd runs f (which must not block) once the next turn's end
// queued has been delivered, after everything of its turn; at once when
// no turn's end is queued.
func (l *Lane) AtTurnEnd(f func()) {
	if !l.queueHasTurnEnd() {
		f()
		return
	}
	l.turnEnd.funcs = append(l.turnEnd.funcs, f)
}

// turnEnded is called when a turn's end has been delivered.
func (l *Lane) turnEnded() {
	fs := l.turnEnd.funcs
	l.turnEnd.funcs = nil
	for _, f := range fs {
		f()
	}
	l.turnEnd.tell = l.turnEnd.ender != nil
}

// tellTurnEnded tells the adapter that the turn's last output is out.
func (l *Lane) tellTurnEnded(ctx context.Context) {
	if !l.turnEnd.tell || l.turnEnd.ender == nil {
		return
	}
	l.turnEnd.tell = false
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l.turnEnd.ender.TurnEnded(ctx, l.thread)
}

// sent tells Options.OnPosted of a message the lane posted.
func (l *Lane) sent(h channels.Handle) {
	if l.onPosted != nil && h.Known() {
		l.onPosted(h)
	}
}
