package session

// Threads the platform itself says are gone (a Discord thread or channel
// deleted, a Slack thread's root message or its channel deleted) or
// archived with their channel: channels.Inbound.Closed or Archived with
// no author, and for a whole channel no thread.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/thread/owner"
)

// platformSaid reports whether in is the platform's own word, not a
// person's: a Closed without an author, which needs no access (the
// thread is gone whoever removed it).
func platformSaid(in channels.Inbound) bool {
	return in.Author.ID == "" && in.Author.Name == ""
}

// gone handles a thread (or, with no Thread, every thread of a channel)
// the platform deleted, on a goroutine the router owns: each thread the
// gateway knows (an owner or a binding) is dropped as a deleted one
// (Router.drop), its workspace removed.
func (r *Router) gone(ref channels.ThreadRef) {
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		for _, t := range r.known(ref) {
			r.drop(t, "")
		}
	}()
}

// known returns the threads ref names that the gateway has an owner or a
// binding for (or, for one thread, a workspace): ref itself, or with no
// ref.Thread the threads of the channel ref.Channel. It reads the store.
func (r *Router) known(ref channels.ThreadRef) []channels.ThreadRef {
	inChannel := func(t channels.ThreadRef) bool {
		if ref.Thread != "" {
			return t == ref
		}
		return t.Platform == ref.Platform && t.Channel == ref.Channel
	}
	var refs []channels.ThreadRef
	r.mu.Lock()
	for t := range r.threads {
		if inChannel(t) {
			refs = append(refs, t)
		}
	}
	r.mu.Unlock()
	ctx, cancel := r.detached(4 * owner.WriteTimeout)
	defer cancel()
	var bs []store.Binding
	var err error
	if ref.Thread != "" {
		var b store.Binding
		var ok bool
		if b, ok, err = r.o.Store.Binding(ctx, ref); ok {
			bs = append(bs, b)
		}
	} else {
		bs, err = r.o.Store.ChannelBindings(ctx, ref.Platform, ref.Channel)
	}
	if err != nil {
		r.log.Error("cannot read the bindings of a deleted thread or channel", "thread", ref, "err", err)
	}
	for _, b := range bs {
		if inChannel(b.Thread) && !slices.Contains(refs, b.Thread) {
			refs = append(refs, b.Thread)
		}
	}
	if ref.Thread != "" && len(refs) == 0 && r.o.Workspaces != nil {
		if _, ok := r.o.Workspaces.Info(ref); ok {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b channels.ThreadRef) int {
		return cmp.Or(strings.Compare(a.Platform, b.Platform), strings.Compare(a.Channel, b.Channel), strings.Compare(a.Thread, b.Thread))
	})
	return refs
}
