package owner

// Every prompt a thread accepted is marked in the store (a
// store.RunningTurn keyed by when it was accepted) until its answer was
// delivered: queued, waiting for an agent, running, or its turn ended
// with its end still on its way through the lane. A worker that dies
// leaves the marks for the worker taking the thread over, which asks the
// prompts again (takeover.go); a restart tells the thread (shutdown.go).
// The machine decides which prompts are marked and when a mark goes
// (thread/machine_inbound.go: MarkPrompt, ClearMark, BeginTurn.Mark);
// the owner writes them, and clears a turn's mark once the lane
// delivered its end.

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/acpgw/gateway/store"
)

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
