package session_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/store"
)

// storeLock holds every write to a store while it is locked, as a
// database another process locked (a backup, `sqlite3`) does, until it
// is unlocked or the write's context ends.
type storeLock struct {
	mu     sync.Mutex
	free   chan struct{} // closed while unlocked
	held   atomic.Int32  // writes that waited
	gaveUp atomic.Int32  // writes whose context ended while they waited
}

func newStoreLock() *storeLock {
	l := &storeLock{free: make(chan struct{})}
	close(l.free)
	return l
}

func (l *storeLock) lock() {
	l.mu.Lock()
	l.free = make(chan struct{})
	l.mu.Unlock()
}

func (l *storeLock) unlock() {
	l.mu.Lock()
	close(l.free)
	l.mu.Unlock()
}

func (l *storeLock) wait(ctx context.Context) error {
	l.mu.Lock()
	free := l.free
	l.mu.Unlock()
	select {
	case <-free:
		return nil
	default:
	}
	l.held.Add(1)
	select {
	case <-free:
		return nil
	case <-ctx.Done():
		l.gaveUp.Add(1)
		return ctx.Err()
	}
}

// lockedStore is a store whose writes wait for its lock.
type lockedStore struct {
	store.Backend
	l *storeLock
}

func (s lockedStore) PutBinding(ctx context.Context, b store.Binding) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.PutBinding(ctx, b)
}

func (s lockedStore) AddPrompt(ctx context.Context, p store.Prompt) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.AddPrompt(ctx, p)
}

func (s lockedStore) SetPromptMessage(ctx context.Context, id, messageID string) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.SetPromptMessage(ctx, id, messageID)
}

func (s lockedStore) ResolvePrompt(ctx context.Context, id string, status store.PromptStatus, chosen, by string, at time.Time) (bool, error) {
	if err := s.l.wait(ctx); err != nil {
		return false, err
	}
	return s.Backend.ResolvePrompt(ctx, id, status, chosen, by, at)
}

func (s lockedStore) AddTurn(ctx context.Context, t store.Turn) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.AddTurn(ctx, t)
}

func (s lockedStore) SetChoice(ctx context.Context, t channels.ThreadRef, option, value string) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.SetChoice(ctx, t, option, value)
}

func (s lockedStore) MarkTurnRunning(ctx context.Context, r store.RunningTurn) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.MarkTurnRunning(ctx, r)
}

func (s lockedStore) ClearTurnRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.ClearTurnRunning(ctx, t, started)
}

func (s lockedStore) SetOpenMessages(ctx context.Context, t channels.ThreadRef, ms []store.OpenMessage) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.SetOpenMessages(ctx, t, ms)
}

func (s lockedStore) SaveEntries(ctx context.Context, sessionID string, es []store.Entry) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.SaveEntries(ctx, sessionID, es)
}

func (s lockedStore) MarkSeen(ctx context.Context, t channels.ThreadRef, id channels.MessageID, at time.Time) error {
	if err := s.l.wait(ctx); err != nil {
		return err
	}
	return s.Backend.MarkSeen(ctx, t, id, at)
}

// TestALockedStoreHoldsNoStop: while every write to the store waits (its
// database locked by another process), a prompt still starts its turn,
// its permission prompt shows and a stop is acknowledged and done at
// once: the thread only queues its writes. Once the store is free again
// nothing was lost: both turns are recorded, the prompt's outcome is
// stored, no running mark is left.
func TestALockedStoreHoldsNoStop(t *testing.T) {
	l := newStoreLock()
	e := newEnv(t, envOptions{
		rec:   channeltest.Options{Edit: true, Typing: true, Prompt: true},
		store: func(b store.Backend) store.Backend { return lockedStore{Backend: b, l: l} },
	})
	th := e.rec.Thread("locked")
	e.say(th, ann, "echo warm")
	e.waitEnd(th)

	l.lock()
	e.say(th, ann, "permission")
	prompt := e.waitOp(th, "the permission prompt", isPrompt)
	e.say(th, ann, "stop")
	e.waitOp(th, "the prompt edited", func(o channeltest.Op) bool {
		return o.Op == "edit" && o.Msg == prompt.Msg && strings.Contains(o.Text, "Cancelled (stopped by Ann)")
	})
	e.waitOp(th, "the stop's notice", hasText("Stopped by Ann."))
	if n := l.gaveUp.Load(); n > 0 {
		t.Fatalf("%d writes gave up waiting for the locked store before the stop was done: the thread waited for them", n)
	}
	if l.held.Load() == 0 {
		t.Fatal("no write waited for the lock: the test proves nothing")
	}
	l.unlock()
	if end := e.waitEnd(th); end.StopReason != "cancelled" {
		t.Errorf("the stopped turn ended %q, want cancelled", end.StopReason)
	}

	// The shutdown waits for the thread's writes; the store stays open.
	e.cancel()
	<-e.done
	defer e.st.Close()
	ctx := t.Context()
	b, ok, err := e.st.Binding(ctx, th)
	if err != nil || !ok {
		t.Fatalf("binding: %v %v", ok, err)
	}
	turns, err := e.st.Turns(ctx, b.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[1].StopReason != "cancelled" {
		t.Errorf("turns recorded %+v, want the warm one and the stopped one", turns)
	}
	pending, err := e.st.PendingPrompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 0 {
		t.Errorf("prompts still pending: %+v", pending)
	}
	if len(prompt.Options) == 0 {
		t.Fatalf("the prompt %+v has no options", prompt)
	}
	id, _, _ := strings.Cut(prompt.Options[0], "/") // an option's id is the prompt's, a slash, the option's
	if p, ok, err := e.st.Prompt(ctx, id); err != nil || !ok || p.Status != store.PromptCancelled || p.MessageID != string(prompt.Msg) {
		t.Errorf("the prompt %q as stored: %+v %v %v; want cancelled, with its message", id, p, ok, err)
	}
	if marks := marksIn(t, e.st, th); len(marks) != 0 {
		t.Errorf("marks left: %+v", marks)
	}
}
