package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// BudgetHold records that a budget was reached in Thread: its next prompt
// waits for an approver's Continue.
type BudgetHold struct {
	Thread channels.ThreadRef
	// Budget is the budget's key (e.g. "tokensPerTurn").
	Budget  string
	Reached time.Time
}

// PutBudgetHold records h, replacing the thread's earlier hold. It does
// file I/O.
func (s *Store) PutBudgetHold(ctx context.Context, h BudgetHold) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO budget_holds
(platform, channel, thread, budget, reached_ms) VALUES (?, ?, ?, ?, ?)`,
			h.Thread.Platform, h.Thread.Channel, h.Thread.Thread, h.Budget, toMS(h.Reached))
		return err
	})
	if err != nil {
		return fmt.Errorf("record the budget reached in %s: %w", h.Thread, err)
	}
	return nil
}

// BudgetHoldOf returns the hold of thread t, if it has one. It does file
// I/O.
func (s *Store) BudgetHoldOf(ctx context.Context, t channels.ThreadRef) (BudgetHold, bool, error) {
	h := BudgetHold{Thread: t}
	var ms int64
	err := s.rdb.QueryRowContext(ctx, `SELECT budget, reached_ms FROM budget_holds
WHERE platform = ? AND channel = ? AND thread = ?`, t.Platform, t.Channel, t.Thread).Scan(&h.Budget, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return BudgetHold{}, false, nil
	}
	if err != nil {
		return BudgetHold{}, false, fmt.Errorf("read the budget hold of %s: %w", t, err)
	}
	h.Reached = fromMS(ms)
	return h, true, nil
}

// ClearBudgetHold forgets the hold of thread t (an approver continued);
// it is not an error if there is none. It does file I/O.
func (s *Store) ClearBudgetHold(ctx context.Context, t channels.ThreadRef) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM budget_holds WHERE platform = ? AND channel = ? AND thread = ?`,
			t.Platform, t.Channel, t.Thread)
		return err
	})
	if err != nil {
		return fmt.Errorf("clear the budget hold of %s: %w", t, err)
	}
	return nil
}

// Spend is what was spent in a thread or a channel, from the recorded
// turns.
type Spend struct {
	Turns int
	// Cost is the sum of what the turns cost, in the agents' currencies
	// taken as one (an agent reports the session's cost so far, so a
	// turn's cost is its last report less the most the session reported
	// before it, and never below zero).
	Cost      float64
	CostKnown bool
}

// spendSQL sums the turns of a channel that ended at or after a time by
// their cost increments: a turn's cost less the most its session
// reported before it in the channel (no less than nothing), none below
// zero (a cost that drops is no refund; the scalar MAX keeps an unknown
// cost NULL). It reads the channel's turns since the time alone
// (turns_channel), and each one's session's earlier turns by the primary
// key.
const spendSQL = `SELECT COUNT(*), SUM(MAX(0, t.cost - MAX(0, COALESCE((
	SELECT MAX(p.cost) FROM turns p
	WHERE p.session_id = t.session_id AND p.seq < t.seq AND p.platform = t.platform AND p.channel = t.channel), 0))))
FROM turns t WHERE t.platform = ? AND t.channel = ? AND t.ended_ms >= ?`

// ChannelSpend returns what the turns of channel (platform, channel)
// that ended at or after since cost. It does file I/O.
func (s *Store) ChannelSpend(ctx context.Context, platform, channel string, since time.Time) (Spend, error) {
	return s.spend(ctx, spendSQL, platform, channel, toMS(since))
}

// ThreadSpend returns what all the turns of thread t cost. It does file
// I/O.
func (s *Store) ThreadSpend(ctx context.Context, t channels.ThreadRef) (Spend, error) {
	return s.spend(ctx, spendSQL+` AND thread = ?`, t.Platform, t.Channel, int64(0), t.Thread)
}

func (s *Store) spend(ctx context.Context, q string, args ...any) (Spend, error) {
	var sp Spend
	var sum sql.NullFloat64
	if err := s.rdb.QueryRowContext(ctx, q, args...).Scan(&sp.Turns, &sum); err != nil {
		return Spend{}, fmt.Errorf("sum the spend: %w", err)
	}
	sp.Cost, sp.CostKnown = sum.Float64, sum.Valid
	return sp, nil
}

// SessionCost returns the highest cost recorded for a turn of session id
// (an agent reports the session's cost so far), and whether any turn had
// one. It does file I/O.
func (s *Store) SessionCost(ctx context.Context, id string) (float64, bool, error) {
	var c sql.NullFloat64
	if err := s.rdb.QueryRowContext(ctx, `SELECT MAX(cost) FROM turns WHERE session_id = ?`, id).Scan(&c); err != nil {
		return 0, false, fmt.Errorf("cost of session %q: %w", id, err)
	}
	return c.Float64, c.Valid, nil
}
