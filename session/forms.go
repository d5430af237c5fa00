package session

import (
	"context"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread/owner"
)

// answerForm hands a form's answer to the thread's owner, or says the
// question no longer waits.
func (r *Router) answerForm(ctx context.Context, ad channels.Adapter, acc owner.Access, in channels.Inbound) {
	r.mu.Lock()
	t := r.threads[in.Thread]
	r.mu.Unlock()
	if t == nil || !t.Form(in, acc) {
		r.reply(ad, in, sysmsg.RefusePromptGone)
	}
}
