package owner

// Every prompt a thread accepted is marked in the store (a
// store.RunningTurn keyed by when it was accepted) until its answer was
// delivered: queued, waiting for an agent, running, or its turn ended
// with its end still on its way through the lane. A worker that dies
// leaves the marks for the worker taking the thread over, which asks the
// prompts again (takeover.go); a restart tells the thread (shutdown.go).

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/thread"
)

// acceptedPrompt is a prompt the thread took and marked, its turn not
// begun: key is its mark's.
type acceptedPrompt struct {
	in  channels.Inbound
	key time.Time
}

// markKey returns the key of a new mark of the thread: now, to the
// millisecond the store keeps, after every key it gave before.
func (t *Thread) markKey() time.Time {
	key := store.NormTime(time.Now())
	if !key.After(t.lastMark) {
		key = t.lastMark.Add(time.Millisecond)
	}
	t.lastMark = key
	return key
}

// accept marks in, a prompt about to go to the machine, which queues or
// starts it; rt, when in is a prompt Adopt asked again, is the mark that
// stands for it already. A prompt the machine drops is unmarked by
// settleAccepted.
func (t *Thread) accept(in channels.Inbound, rt *Retaken) {
	if rt != nil {
		t.accepted = append(t.accepted, acceptedPrompt{in: in, key: rt.Started})
		return
	}
	key := t.markKey()
	t.mark(store.RunningTurn{Thread: t.ref, Started: key, Prompt: TurnPrompt(in, in.Files)},
		"cannot mark the prompt taken; a crash before it is answered would lose it")
	t.accepted = append(t.accepted, acceptedPrompt{in: in, key: key})
}

// taken returns the mark of in, whose turn begins now, which stays until
// the turn's end was delivered; false when in was not accepted.
func (t *Thread) taken(in channels.Inbound) (time.Time, bool) {
	for i, a := range t.accepted {
		if thread.SamePrompt(a.in, in) {
			t.accepted = slices.Delete(t.accepted, i, i+1)
			return a.key, true
		}
	}
	return time.Time{}, false
}

// settleAccepted clears the marks of the accepted prompts the machine
// neither queues nor starts any more and whose turns did not begin: a
// stop dropped them, their start failed, they were refused. Those a
// shutdown dropped keep their marks: nobody answered them, the thread's
// next owner asks them again, as do those whose start the shutdown
// cancelled before the machine heard of it.
func (t *Thread) settleAccepted() {
	if t.m.ShuttingDown() || t.d.Ctx.Err() != nil {
		return
	}
	kept := t.accepted[:0]
	for _, a := range t.accepted {
		if t.m.Holds(a.in) {
			kept = append(kept, a)
			continue
		}
		t.unmark(a.key, "cannot clear the mark of a prompt that began no turn")
	}
	clear(t.accepted[len(kept):])
	t.accepted = kept
}

// endedMarks are the marks of the turns whose ends are on their way
// through the lane, in order (the owner pushes, the lane pops).
type endedMarks struct {
	mu   sync.Mutex
	keys []time.Time
}

func (e *endedMarks) push(key time.Time) {
	e.mu.Lock()
	e.keys = append(e.keys, key)
	e.mu.Unlock()
}

func (e *endedMarks) pop() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.keys) == 0 {
		return time.Time{}, false
	}
	k := e.keys[0]
	e.keys = e.keys[1:]
	return k, true
}

// delivered is the lane's word that a turn's end is in the thread: its
// prompt's mark goes. It runs on the lane's goroutine.
func (t *Thread) delivered() {
	key, ok := t.ended.pop()
	if !ok || key.IsZero() {
		return
	}
	t.unmark(key, "cannot clear the turn's running mark")
}

// markSave is the saves' key of the mark key: its record, written whole
// (a clear replaces a mark not written yet).
func markSave(key time.Time) string { return "mark:" + strconv.FormatInt(key.UnixNano(), 10) }

// mark records rt (through the thread's saves); failed is logged if it
// cannot be.
func (t *Thread) mark(rt store.RunningTurn, failed string) {
	st := t.d.Store
	t.saves.write(markSave(rt.Started), "the running mark", func(ctx context.Context) error { return st.MarkTurnRunning(ctx, rt) },
		func(err error) { t.d.Log.Warn(failed, "thread", t.ref, "err", err) })
}

// unmark clears the mark key (through the thread's saves); failed is
// logged if it cannot be.
func (t *Thread) unmark(key time.Time, failed string) {
	st, ref := t.d.Store, t.ref
	t.saves.write(markSave(key), "the running mark's end", func(ctx context.Context) error { return st.ClearTurnRunning(ctx, ref, key) },
		func(err error) { t.d.Log.Warn(failed, "thread", ref, "err", err) })
}
