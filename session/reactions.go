package session

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/thread/owner"
)

// reaction handles a person's reaction in a thread: a stop reaction is
// told to the thread's owner; anything else is ignored.
func (r *Router) reaction(acc owner.Access, in channels.Inbound) {
	re := in.Reaction
	if re.Removed || !channels.IsStopReaction(re.Emoji) {
		return
	}
	r.mu.Lock()
	t := r.threads[in.Thread]
	r.mu.Unlock()
	if t == nil {
		return // nothing runs in a thread its owner left
	}
	t.Reaction(thread.ReactionStop{By: in.Author, Message: re.Message, MayStop: acc.MayPrompt(in)})
}
