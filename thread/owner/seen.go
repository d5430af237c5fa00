package owner

import (
	"context"
	"time"

	"github.com/acpgw/gateway/channels"
)

// saveSeen marks in seen through the thread's saves, behind what the
// thread wrote for it before (its prompt's mark).
func (t *Thread) saveSeen(in channels.Inbound) {
	if !t.d.Host.KeepsSeen(in) {
		return
	}
	st, ref, id, log := t.d.Store, t.ref, in.ID, t.d.Log
	t.saves.write("seen", "the last message seen", func(ctx context.Context) error { return st.MarkSeen(ctx, ref, id, time.Now()) },
		func(err error) { log.Warn("cannot record the last message seen", "thread", ref, "err", err) })
}
