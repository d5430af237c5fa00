package jsstore

// Sessions attached to a thread (/attach) and those of deleted threads,
// in the bucket <cluster>_sessions, a key per session: a claim is created
// if absent or changed by compare-and-set, so that of two workers
// attaching one session at once exactly one wins.

import (
	"context"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// claimFresh is how long a claim holds even when its thread's binding
// does not name the session (yet): the claim is written before the
// binding.
const claimFresh = time.Minute

// AttachSession binds b.Thread to b.SessionID unless the session was a
// deleted thread's (store.ErrSessionGone), another thread is bound to it
// or attached it (store.ErrSessionTaken).
func (s *Store) AttachSession(ctx context.Context, b store.Binding) error {
	b = normBinding(b)
	fail := func(err error) error { return fmt.Errorf("attach session %q to %s: %w", b.SessionID, b.Thread, err) }
	bs, err := s.Bindings(ctx)
	if err != nil {
		return fail(err)
	}
	for _, o := range bs {
		if o.SessionID == b.SessionID && o.Thread != b.Thread {
			return fail(store.ErrSessionTaken)
		}
	}
	now := time.Now()
	err = update(ctx, s.sessions, token(b.SessionID), claimCodec, func(v *sessionClaim, ok bool) (bool, error) {
		switch {
		case ok && v.Gone:
			return false, store.ErrSessionGone
		case ok && v.Thread != b.Thread && now.Sub(v.At) < claimFresh:
			return false, store.ErrSessionTaken
		case ok && v.Thread != b.Thread:
			// An older claim holds while its thread is bound to the
			// session.
			o, bound, err := s.Binding(ctx, v.Thread)
			if err != nil {
				return false, err
			}
			if bound && o.SessionID == b.SessionID {
				return false, store.ErrSessionTaken
			}
		}
		*v = sessionClaim{Thread: b.Thread, At: now}
		return true, nil
	})
	if err != nil {
		return fail(err)
	}
	return s.PutBinding(ctx, b)
}

// SessionGone reports whether session id was a deleted thread's.
func (s *Store) SessionGone(ctx context.Context, id string) (bool, error) {
	v, _, ok, err := get(ctx, s.sessions, token(id), claimCodec)
	if err != nil {
		return false, fmt.Errorf("read whether session %q is gone: %w", id, err)
	}
	return ok && v.Gone, nil
}

// tombstone records the session t is bound to, if any, as gone.
func (s *Store) tombstone(ctx context.Context, t channels.ThreadRef) error {
	b, ok, err := s.Binding(ctx, t)
	if err != nil || !ok || b.SessionID == "" {
		return err
	}
	return put(ctx, s.sessions, token(b.SessionID), claimCodec, sessionClaim{Thread: t, At: store.NormTime(time.Now()), Gone: true})
}
