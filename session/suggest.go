package session

import (
	"context"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread/owner"
)

// claimSession binds ref to session id unless another thread is bound to
// it or a deleted thread had it; it returns what to say instead, or nil.
func (r *Router) claimSession(ctx context.Context, ref channels.ThreadRef, agentName, id string) sysmsg.Notice {
	st := r.o.Store
	b, ok, err := st.Binding(ctx, ref)
	if err != nil {
		r.log.Error("cannot read the thread's binding", "thread", ref, "err", err)
		return sysmsg.SetFailed{Option: "session", Err: err.Error()}
	}
	if ok && b.SessionID == id {
		return sysmsg.AttachBound{ID: id, Here: true}
	}
	if !ok {
		b = store.Binding{Thread: ref, Agent: agentName, Created: time.Now()}
	}
	// The claim: of two threads attaching the session at once, one wins.
	b.SessionID, b.Title, b.Updated = id, "", time.Now()
	err = st.AttachSession(ctx, b)
	switch {
	case errors.Is(err, store.ErrSessionGone):
		r.log.Warn("/attach of a deleted thread's session refused", "thread", ref, "session", id)
		return sysmsg.AttachGone{ID: id}
	case errors.Is(err, store.ErrSessionTaken):
		return sysmsg.AttachBound{ID: id}
	case err != nil:
		r.log.Error("cannot attach the session", "thread", ref, "session", id, "err", err)
		return sysmsg.SetFailed{Option: "session", Err: err.Error()}
	}
	return nil
}

// suggest answers a request for suggestions (Inbound.Suggest): the
// thread's owner knows the values; a thread not in memory, or a person
// who may not prompt, gets none.
func (r *Router) suggest(in channels.Inbound, acc owner.Access) {
	r.mu.Lock()
	t := r.threads[in.Thread]
	r.mu.Unlock()
	if acc.MayPrompt(in) && t != nil && t.Suggest(in) {
		return
	}
	r.answerSuggest(in, nil)
}

// answerSuggest calls in.Suggest with opts on a goroutine of the router.
func (r *Router) answerSuggest(in channels.Inbound, opts []channels.Option) {
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(r.ctx, 3*time.Second)
		defer cancel()
		if err := in.Suggest(ctx, opts); err != nil {
			r.log.Debug("cannot answer a request for suggestions", "thread", in.Thread, "err", err)
		}
	}()
}
