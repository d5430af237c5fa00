package owner

import (
	"slices"

	"github.com/acpgw/gateway/channels"
)

// tookKept is how many of a thread's last message ids its owner keeps to
// know a message delivered twice.
const tookKept = 128

// tookBefore reports whether the owner took a message with in's id
// already, and remembers it otherwise. A platform redelivers an event
// whose acknowledgement it missed, and a cluster's stream one whose
// worker died before its word got out, after the worker taking the thread
// over asked the prompt again from its mark: the second copy would be
// answered twice. Messages without an id are always new.
func (t *Thread) tookBefore(in channels.Inbound) bool {
	if in.ID == "" {
		return false
	}
	if slices.Contains(t.took, in.ID) {
		return true
	}
	if len(t.took) == tookKept {
		t.took = slices.Delete(t.took, 0, 1)
	}
	t.took = append(t.took, in.ID)
	return false
}
