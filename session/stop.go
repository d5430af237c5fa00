package session

import (
	"context"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// stopReason says why a turn is being stopped.
type stopReason uint8

const (
	stopByPerson    stopReason = iota + 1 // someone said "stop"
	stopByInterrupt                       // a new message under the interrupt policy
)

// stop implements the cancel contract (package abort): session/cancel;
// pending permission prompts answered cancelled and their messages
// updated; queued messages dropped (except the interrupting one); typing
// stopped; after the grace period the agent is killed (the next message
// starts it again); one notice names who stopped the turn. The local
// cleanup never depends on the cancel call, and nothing here waits for
// outbound delivery.
func (t *thread) stop(by channels.Author, why stopReason) {
	name := displayName(by)
	t.mu.Lock()
	tu, sess, proc := t.turn, t.sess, t.proc
	dropped := 0
	if why == stopByPerson {
		dropped = len(t.queue)
		t.queue = nil
	}
	first := tu != nil && tu.stopper == ""
	if first {
		tu.stopper, tu.reason = name, why
		// Said at once, whatever the agent does with the cancel; from
		// now on its output is not shown (thread.Update), and the final
		// notice replaces this one (endTurn).
		tu.ack = fmt.Sprintf("stop-%d", t.turnSeq)
		t.runner.Notice(tu.ack, sysmsg.Text(sysmsg.Stopping{}))
	}
	starting := tu == nil && t.active && t.startStop == nil
	if starting {
		t.startStop = &turn{stopper: name, reason: why}
		if t.cancelStart != nil {
			t.cancelStart() // an agent that is still starting is given up
		}
	}
	t.mu.Unlock()

	for _, p := range t.allPending() {
		t.resolve(p, store.PromptCancelled, "", by)
	}
	if tu == nil {
		if starting {
			t.runner.Do(stopTyping)
			return // runTurn tells the thread once the start has ended
		}
		if why == stopByPerson {
			t.notice(sysmsg.NothingRunning{Dropped: dropped})
		}
		return
	}
	if !first {
		return // a second "stop" while the first is in progress
	}
	t.r.log.Info("stopping the turn", "thread", t.ref, "by", by.ID, "dropped", dropped)
	t.runner.Do(stopTyping)

	// The cancel notification and the grace timer run apart from the
	// inbound handler: an agent with a full stdin must not block it.
	grace := t.r.o.Abort.Grace
	t.r.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sess.Cancel(ctx); err != nil {
			t.r.log.Warn("session/cancel failed; the agent is killed after the grace period", "thread", t.ref, "err", err)
		}
	})
	t.mu.Lock()
	tu.grace = time.AfterFunc(grace, func() {
		t.mu.Lock()
		running := t.turn == tu
		if running {
			tu.killed = true
		}
		t.mu.Unlock()
		if running {
			t.r.log.Warn("the agent ignored session/cancel; killing it", "thread", t.ref, "grace", grace)
			proc.Kill()
		}
	})
	t.mu.Unlock()
}

// pushEnd queues the outputs of a turn's end. The final notice of a
// stopped turn (the projector's, see Projector.StopTurn) takes the place
// of its "Stopping…" notice (edited in place where the
// channel can edit), in order before the TurnEnd, which is last.
func (t *thread) pushEnd(tu *turn, outs []projector.Output) {
	if tu.ack == "" || len(outs) < 2 {
		t.runner.Push(outs...)
		return
	}
	n, ok := outs[len(outs)-2].(projector.Notice)
	if !ok || n.Reason != projector.NoticeTurnStopped {
		t.runner.Push(outs...)
		return
	}
	t.runner.Push(outs[:len(outs)-2]...)
	t.runner.ReplaceNotice(tu.ack, n.Text)
	t.runner.Push(outs[len(outs)-1])
}

func displayName(a channels.Author) string { return sysmsg.Who(a.Name, a.ID) }

func stopTyping(l *dispatch.Lane) { l.StopTyping() }
