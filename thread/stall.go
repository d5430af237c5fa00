package thread

import (
	"time"

	"github.com/acpgw/gateway/sysmsg"
)

// stallWatch tells when the agent of a running turn has been silent for
// too long: once per silence, as output starts a new one. It is pure: the
// thread feeds it the time.
type stallWatch struct {
	after time.Duration
	last  time.Time // the last output, or the start of the turn
	told  bool      // the current silence has been told
}

// output records output at now. It reports whether the watch was idle
// (its silence told), so the caller arms its timer again.
func (w *stallWatch) output(now time.Time) (rearm bool) {
	rearm = w.told
	w.last, w.told = now, false
	return rearm
}

// check reports whether the silence is to be told now (at most once per
// silence), and how long until the next check (0: none until output).
func (w *stallWatch) check(now time.Time) (tell bool, next time.Duration) {
	if w.told {
		return false, 0
	}
	if left := w.last.Add(w.after).Sub(now); left > 0 {
		return false, left
	}
	w.told = true
	return true, 0
}

// stallNotice is the sentence of the notice for a silence of d
// (checkStall posts sysmsg.Stalled itself; TestStallNoticeText reads it).
func stallNotice(d time.Duration) string { return sysmsg.Stalled{For: d}.Body() }
