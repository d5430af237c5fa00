package session_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// slowWrites makes every write of the store take d longer: with
// GATEWAY_TEST_SLOW_WRITES=40ms the whole suite runs against a store
// that answers late, which finds a test (or a reader across threads)
// that reads what a thread queued in its saves before it was written.
type slowWrites struct {
	store.Backend
	d time.Duration
}

// slowWritesFromEnv is GATEWAY_TEST_SLOW_WRITES, or 0.
func slowWritesFromEnv(t testing.TB) time.Duration {
	v := os.Getenv("GATEWAY_TEST_SLOW_WRITES")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("GATEWAY_TEST_SLOW_WRITES=%q: %v", v, err)
	}
	return d
}

func (s slowWrites) slow() { time.Sleep(s.d) }

func (s slowWrites) PutBinding(ctx context.Context, b store.Binding) error {
	s.slow()
	return s.Backend.PutBinding(ctx, b)
}
func (s slowWrites) DeleteBinding(ctx context.Context, t channels.ThreadRef) error {
	s.slow()
	return s.Backend.DeleteBinding(ctx, t)
}
func (s slowWrites) AttachSession(ctx context.Context, b store.Binding) error {
	s.slow()
	return s.Backend.AttachSession(ctx, b)
}
func (s slowWrites) AddPrompt(ctx context.Context, p store.Prompt) error {
	s.slow()
	return s.Backend.AddPrompt(ctx, p)
}
func (s slowWrites) SetPromptMessage(ctx context.Context, id, m string) error {
	s.slow()
	return s.Backend.SetPromptMessage(ctx, id, m)
}
func (s slowWrites) ResolvePrompt(ctx context.Context, id string, st store.PromptStatus, c, by string, at time.Time) (bool, error) {
	s.slow()
	return s.Backend.ResolvePrompt(ctx, id, st, c, by, at)
}
func (s slowWrites) AddTurn(ctx context.Context, t store.Turn) error {
	s.slow()
	return s.Backend.AddTurn(ctx, t)
}
func (s slowWrites) PutBudgetHold(ctx context.Context, h store.BudgetHold) error {
	s.slow()
	return s.Backend.PutBudgetHold(ctx, h)
}
func (s slowWrites) ClearBudgetHold(ctx context.Context, t channels.ThreadRef) error {
	s.slow()
	return s.Backend.ClearBudgetHold(ctx, t)
}
func (s slowWrites) SetChoice(ctx context.Context, t channels.ThreadRef, o, v string) error {
	s.slow()
	return s.Backend.SetChoice(ctx, t, o, v)
}
func (s slowWrites) ClearChoices(ctx context.Context, t channels.ThreadRef) error {
	s.slow()
	return s.Backend.ClearChoices(ctx, t)
}
func (s slowWrites) DropChoice(ctx context.Context, t channels.ThreadRef, o string) error {
	s.slow()
	return s.Backend.DropChoice(ctx, t, o)
}
func (s slowWrites) MarkTurnRunning(ctx context.Context, r store.RunningTurn) error {
	s.slow()
	return s.Backend.MarkTurnRunning(ctx, r)
}
func (s slowWrites) ClearTurnRunning(ctx context.Context, t channels.ThreadRef, at time.Time) error {
	s.slow()
	return s.Backend.ClearTurnRunning(ctx, t, at)
}
func (s slowWrites) SetOpenMessages(ctx context.Context, t channels.ThreadRef, ms []store.OpenMessage) error {
	s.slow()
	return s.Backend.SetOpenMessages(ctx, t, ms)
}
func (s slowWrites) MarkSeen(ctx context.Context, t channels.ThreadRef, id channels.MessageID, at time.Time) error {
	s.slow()
	return s.Backend.MarkSeen(ctx, t, id, at)
}
func (s slowWrites) SaveEntries(ctx context.Context, id string, es []store.Entry) error {
	s.slow()
	return s.Backend.SaveEntries(ctx, id, es)
}
