package jsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

func normBinding(b store.Binding) store.Binding {
	b.Created, b.Updated = store.NormTime(b.Created), store.NormTime(b.Updated)
	return b
}

// Binding returns the binding of t.
func (s *Store) Binding(ctx context.Context, t channels.ThreadRef) (store.Binding, bool, error) {
	b, _, ok, err := get(ctx, s.bindings, threadKey(t), bindingCodec)
	if err != nil {
		return store.Binding{}, false, fmt.Errorf("read binding %s: %w", t, err)
	}
	return b, ok, nil
}

// PutBinding creates or updates b's thread's binding; an update keeps the
// creation time there.
func (s *Store) PutBinding(ctx context.Context, b store.Binding) error {
	b = normBinding(b)
	if b.Updated.IsZero() {
		b.Updated = store.NormTime(time.Now())
	}
	if b.Created.IsZero() {
		b.Created = b.Updated
	}
	err := update(ctx, s.bindings, threadKey(b.Thread), bindingCodec, func(v *store.Binding, ok bool) (bool, error) {
		created := b.Created
		if ok {
			created = v.Created
		}
		*v = b
		v.Created = created
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("put binding %s: %w", b.Thread, err)
	}
	return nil
}

// DeleteBinding forgets t's binding, and what is kept per thread
// besides: its choices, budget hold and last message seen (the binding
// last, so that a deletion cut short is tried again whole); its session
// is recorded gone first (sessions.go).
func (s *Store) DeleteBinding(ctx context.Context, t channels.ThreadRef) error {
	if err := s.tombstone(ctx, t); err != nil {
		return fmt.Errorf("delete binding %s: %w", t, err)
	}
	for _, kv := range []jetstream.KeyValue{s.choices, s.holds, s.seen, s.bindings} {
		if err := del(ctx, kv, threadKey(t)); err != nil {
			return fmt.Errorf("delete binding %s: %w", t, err)
		}
	}
	return nil
}

func threadCmp(a, b channels.ThreadRef) int {
	return cmp.Or(cmp.Compare(a.Platform, b.Platform), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Thread, b.Thread))
}

// Bindings lists every binding by platform, channel and thread.
func (s *Store) Bindings(ctx context.Context) ([]store.Binding, error) {
	var bs []store.Binding
	err := allOf(ctx, s.bindings, bindingCodec, func(_ string, b store.Binding) error {
		bs = append(bs, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list bindings: %w", err)
	}
	slices.SortFunc(bs, func(a, b store.Binding) int { return threadCmp(a.Thread, b.Thread) })
	return bs, nil
}

// ChannelBindings lists the bindings of the threads of one channel, by
// thread: a watch of the keys starting with the platform and the channel
// (threadKey), so the server sends no other channel's.
func (s *Store) ChannelBindings(ctx context.Context, platform, channel string) ([]store.Binding, error) {
	var bs []store.Binding
	err := allOf(ctx, s.bindings, bindingCodec, func(_ string, b store.Binding) error {
		bs = append(bs, b)
		return nil
	}, token(platform)+"."+token(channel)+".*")
	if err != nil {
		return nil, fmt.Errorf("list the bindings of channel %s/%s: %w", platform, channel, err)
	}
	slices.SortFunc(bs, func(a, b store.Binding) int { return threadCmp(a.Thread, b.Thread) })
	return bs, nil
}

func normPrompt(p store.Prompt) store.Prompt {
	p.CreatedAt, p.ExpiresAt, p.ResolvedAt = store.NormTime(p.CreatedAt), store.NormTime(p.ExpiresAt), store.NormTime(p.ResolvedAt)
	return p
}

// AddPrompt records a new prompt; its id must be new.
func (s *Store) AddPrompt(ctx context.Context, p store.Prompt) error {
	if p.ID == "" {
		return errors.New("add prompt: empty id")
	}
	p = normPrompt(p)
	if p.Status == "" {
		p.Status = store.PromptPending
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = store.NormTime(time.Now())
	}
	b, err := promptCodec.enc(p)
	if err != nil {
		return fmt.Errorf("add prompt %q: %w", p.ID, err)
	}
	if _, err := s.prompts.Create(ctx, token(p.ID), b); err != nil {
		return fmt.Errorf("add prompt %q: %w", p.ID, err)
	}
	return nil
}

// SetPromptMessage records the message showing prompt id.
func (s *Store) SetPromptMessage(ctx context.Context, id, messageID string) error {
	err := update(ctx, s.prompts, token(id), promptCodec, func(p *store.Prompt, ok bool) (bool, error) {
		if !ok {
			return false, store.ErrNotFound
		}
		p.MessageID = messageID
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("set prompt %q message: %w", id, err)
	}
	return nil
}

// ResolvePrompt settles prompt id if it is pending; exactly one caller in
// the cluster gets true.
func (s *Store) ResolvePrompt(ctx context.Context, id string, status store.PromptStatus, chosen, by string, at time.Time) (bool, error) {
	switch status {
	case store.PromptAnswered, store.PromptExpired, store.PromptCancelled:
	default:
		return false, fmt.Errorf("resolve prompt %q: status must be one of answered expired cancelled, got %q", id, status)
	}
	at = store.NormTime(at)
	if at.IsZero() {
		at = store.NormTime(time.Now())
	}
	won := false
	err := update(ctx, s.prompts, token(id), promptCodec, func(p *store.Prompt, ok bool) (bool, error) {
		if !ok || p.Status != store.PromptPending {
			won = false
			return false, nil
		}
		p.Status, p.Chosen, p.ChosenBy, p.ResolvedAt = status, chosen, by, at
		won = true
		return true, nil
	})
	if err != nil {
		return false, fmt.Errorf("resolve prompt %q: %w", id, err)
	}
	return won, nil
}

// Prompt returns prompt id.
func (s *Store) Prompt(ctx context.Context, id string) (store.Prompt, bool, error) {
	p, _, ok, err := get(ctx, s.prompts, token(id), promptCodec)
	if err != nil {
		return store.Prompt{}, false, fmt.Errorf("read prompt %q: %w", id, err)
	}
	return p, ok, nil
}

type revPrompt struct {
	store.Prompt
	key string
	rev uint64
}

func (s *Store) pending(ctx context.Context) ([]revPrompt, error) {
	var ps []revPrompt
	err := all(ctx, s.prompts, func(key string, rev uint64, data []byte) error {
		p, err := promptCodec.dec(data)
		if err != nil {
			return fmt.Errorf("key %s: %w", key, err)
		}
		if p.Status == store.PromptPending {
			ps = append(ps, revPrompt{p, key, rev})
		}
		return nil
	})
	slices.SortFunc(ps, func(a, b revPrompt) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return ps, err
}

// PendingPrompts lists the prompts still waiting, oldest first.
func (s *Store) PendingPrompts(ctx context.Context) ([]store.Prompt, error) {
	rps, err := s.pending(ctx)
	if err != nil {
		return nil, fmt.Errorf("list pending prompts: %w", err)
	}
	var ps []store.Prompt
	for _, rp := range rps {
		ps = append(ps, rp.Prompt)
	}
	return ps, nil
}

// ExpireAll expires every pending prompt and returns those it expired,
// oldest first (one another worker settled meanwhile is not among them).
func (s *Store) ExpireAll(ctx context.Context, at time.Time) ([]store.Prompt, error) {
	at = store.NormTime(at)
	if at.IsZero() {
		at = store.NormTime(time.Now())
	}
	rps, err := s.pending(ctx)
	if err != nil {
		return nil, fmt.Errorf("expire prompts: %w", err)
	}
	var ps []store.Prompt
	for _, rp := range rps {
		won, err := s.ResolvePrompt(ctx, rp.ID, store.PromptExpired, rp.Chosen, rp.ChosenBy, at)
		if err != nil {
			return ps, fmt.Errorf("expire prompts: %w", err)
		}
		if won {
			p := rp.Prompt
			p.Status, p.ResolvedAt = store.PromptExpired, at
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// PutBudgetHold records that h.Thread holds its next turn.
func (s *Store) PutBudgetHold(ctx context.Context, h store.BudgetHold) error {
	h.Reached = store.NormTime(h.Reached)
	if err := put(ctx, s.holds, threadKey(h.Thread), holdCodec, h); err != nil {
		return fmt.Errorf("record the budget reached in %s: %w", h.Thread, err)
	}
	return nil
}

// BudgetHoldOf returns t's budget hold.
func (s *Store) BudgetHoldOf(ctx context.Context, t channels.ThreadRef) (store.BudgetHold, bool, error) {
	h, _, ok, err := get(ctx, s.holds, threadKey(t), holdCodec)
	if err != nil {
		return store.BudgetHold{}, false, fmt.Errorf("read the budget hold of %s: %w", t, err)
	}
	return h, ok, nil
}

// ClearBudgetHold lifts t's budget hold.
func (s *Store) ClearBudgetHold(ctx context.Context, t channels.ThreadRef) error {
	if err := del(ctx, s.holds, threadKey(t)); err != nil {
		return fmt.Errorf("clear the budget hold of %s: %w", t, err)
	}
	return nil
}

// SetChoice records value for option in t.
func (s *Store) SetChoice(ctx context.Context, t channels.ThreadRef, option, value string) error {
	err := update(ctx, s.choices, threadKey(t), choicesCodec, func(m *map[string]string, _ bool) (bool, error) {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[option] = value
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("save the choice of %s in %s: %w", option, t, err)
	}
	return nil
}

// Choices returns the options chosen in t.
func (s *Store) Choices(ctx context.Context, t channels.ThreadRef) (map[string]string, error) {
	m, _, _, err := get(ctx, s.choices, threadKey(t), choicesCodec)
	if err != nil {
		return nil, fmt.Errorf("read the choices of %s: %w", t, err)
	}
	if m == nil {
		m = map[string]string{}
	}
	return m, nil
}

// DropChoice forgets the choice of option in t, keeping the others.
func (s *Store) DropChoice(ctx context.Context, t channels.ThreadRef, option string) error {
	err := update(ctx, s.choices, threadKey(t), choicesCodec, func(m *map[string]string, _ bool) (bool, error) {
		if _, ok := (*m)[option]; !ok {
			return false, nil
		}
		delete(*m, option)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("forget the choice of %s in %s: %w", option, t, err)
	}
	return nil
}

// ClearChoices forgets the options chosen in t.
func (s *Store) ClearChoices(ctx context.Context, t channels.ThreadRef) error {
	if err := del(ctx, s.choices, threadKey(t)); err != nil {
		return fmt.Errorf("forget the choices of %s: %w", t, err)
	}
	return nil
}

// runningKey is the key of the mark of t's prompt accepted at started:
// a thread has one per prompt. Marks written before were keyed by the
// thread alone (threadKey): they are read and cleared still.
func runningKey(t channels.ThreadRef, started time.Time) string {
	return threadKey(t) + "." + strconv.FormatInt(started.UnixMilli(), 10)
}

// MarkTurnRunning records r, replacing the mark of its thread with the
// same Started.
func (s *Store) MarkTurnRunning(ctx context.Context, r store.RunningTurn) error {
	r.Started = store.NormTime(r.Started)
	r.Prompt.Time = store.NormTime(r.Prompt.Time)
	if err := put(ctx, s.running, runningKey(r.Thread, r.Started), runningCodec, r); err != nil {
		return fmt.Errorf("mark the turn in %s running: %w", r.Thread, err)
	}
	return nil
}

// ClearTurnRunning forgets t's mark started at started (all of t's marks
// for a zero time).
func (s *Store) ClearTurnRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error {
	started = store.NormTime(started)
	err := s.clearLegacyRunning(ctx, t, started)
	if err == nil && !started.IsZero() {
		err = del(ctx, s.running, runningKey(t, started))
	}
	if err == nil && started.IsZero() {
		prefix := threadKey(t) + "."
		var keys []string
		err = all(ctx, s.running, func(key string, _ uint64, _ []byte) error {
			if strings.HasPrefix(key, prefix) {
				keys = append(keys, key)
			}
			return nil
		})
		for _, k := range keys {
			if err == nil {
				err = del(ctx, s.running, k)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("clear the running turn of %s: %w", t, err)
	}
	return nil
}

// clearLegacyRunning forgets t's mark keyed by the thread alone (written
// before marks were per prompt) if it started at started (whatever it
// started at, for a zero time).
func (s *Store) clearLegacyRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error {
	key := threadKey(t)
	if started.IsZero() {
		return del(ctx, s.running, key)
	}
	var err error
	for range casTries {
		var r store.RunningTurn
		var rev uint64
		var ok bool
		if r, rev, ok, err = get(ctx, s.running, key, runningCodec); err != nil || !ok || !r.Started.Equal(started) {
			return err
		}
		if err = s.running.Delete(ctx, key, jetstream.LastRevision(rev)); !conflict(err) {
			return err
		}
	}
	return err
}

// RunningTurns lists the running turns, oldest first.
func (s *Store) RunningTurns(ctx context.Context) ([]store.RunningTurn, error) {
	var rs []store.RunningTurn
	err := allOf(ctx, s.running, runningCodec, func(_ string, r store.RunningTurn) error {
		rs = append(rs, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list running turns: %w", err)
	}
	slices.SortFunc(rs, func(a, b store.RunningTurn) int {
		return cmp.Or(a.Started.Compare(b.Started), threadCmp(a.Thread, b.Thread))
	})
	return rs, nil
}

// MarkSeen records id as the last message read in t.
func (s *Store) MarkSeen(ctx context.Context, t channels.ThreadRef, id channels.MessageID, at time.Time) error {
	if err := put(ctx, s.seen, threadKey(t), seenCodec, seenMark{MessageID: id, At: store.NormTime(at), Thread: t}); err != nil {
		return fmt.Errorf("mark seen %s: %w", t, err)
	}
	return nil
}

// LastSeen returns the id of the last message read in t.
func (s *Store) LastSeen(ctx context.Context, t channels.ThreadRef) (channels.MessageID, bool, error) {
	v, _, ok, err := get(ctx, s.seen, threadKey(t), seenCodec)
	if err != nil {
		return "", false, fmt.Errorf("last seen in %s: %w", t, err)
	}
	return v.MessageID, ok, nil
}

// SeenSince lists the threads read since since, latest first, those not
// bound (yet) with only their ref, as store.Store.SeenSince does.
func (s *Store) SeenSince(ctx context.Context, since time.Time) ([]store.Seen, error) {
	vs, err := seenMarks(ctx, s.js, s.cluster+"_seen", ">", since)
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	return seenBound(ctx, vs, s.Binding)
}
