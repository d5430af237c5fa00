package session

import (
	"context"

	"github.com/acpgw/gateway/thread/owner"
)

// FlushSaves waits until what every live thread queued so far is
// written, or ctx ends: for a read across threads (one thread's
// binding, read by another; a reader of the store from outside, such
// as a test). Not on an owner.
func (r *Router) FlushSaves(ctx context.Context) {
	r.mu.Lock()
	all := make([]*owner.Thread, 0, len(r.threads))
	for _, t := range r.threads {
		all = append(all, t)
	}
	r.mu.Unlock()
	for _, t := range all {
		t.FlushSaves(ctx)
	}
}
