package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Turn is the record of one prompt turn: how it ended and what it used.
type Turn struct {
	Thread    channels.ThreadRef
	SessionID string
	// Seq numbers the session's turns from 1. AddTurn assigns the next
	// number when it is 0.
	Seq int
	// StopReason is the ACP stopReason; Error the error text when the
	// turn failed instead.
	StopReason string
	Error      string
	Started    time.Time
	Ended      time.Time
	// Used and Size are the context window's tokens in use and its size,
	// as last reported in the turn; meaningful only when their Known flag
	// is set.
	Used, Size           int64
	UsedKnown, SizeKnown bool
	// Cost is the cost the agent reported for the turn, in Currency;
	// meaningful only when CostKnown.
	Cost      float64
	Currency  string
	CostKnown bool
	// PromptChars and ReplyChars are the lengths, in code points, of the
	// prompt sent and the reply text received.
	PromptChars int
	ReplyChars  int
}

// Usage sums up a session's turns.
type Usage struct {
	// Turns is the number of turns recorded.
	Turns int
	// Cost is the session's cost per currency: the highest a turn
	// recorded, as an agent reports the session's cost so far (summing
	// the turns would count earlier turns again). Turns without a known
	// cost add nothing. Nil when no turn had one.
	Cost map[string]float64
}

const turnCols = `session_id, seq, platform, channel, thread, stop_reason, error, started_ms, ended_ms,
	used, size, cost, currency, prompt_chars, reply_chars`

// AddTurn records t, replacing the turn with the same session and Seq if
// there is one. A zero Seq gets the session's next number. It does file I/O.
func (s *Store) AddTurn(ctx context.Context, t Turn) error {
	used := sql.NullInt64{Int64: t.Used, Valid: t.UsedKnown}
	size := sql.NullInt64{Int64: t.Size, Valid: t.SizeKnown}
	cost := sql.NullFloat64{Float64: t.Cost, Valid: t.CostKnown}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if t.Seq == 0 {
			err := tx.QueryRowContext(ctx,
				`SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session_id = ?`, t.SessionID).Scan(&t.Seq)
			if err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO turns (`+turnCols+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.SessionID, t.Seq, t.Thread.Platform, t.Thread.Channel, t.Thread.Thread,
			t.StopReason, t.Error, toMS(t.Started), toMS(t.Ended),
			used, size, cost, t.Currency, t.PromptChars, t.ReplyChars)
		return err
	})
	if err != nil {
		return fmt.Errorf("add turn of session %q: %w", t.SessionID, err)
	}
	return nil
}

// Turns returns the turns of a session in Seq order. It does file I/O.
func (s *Store) Turns(ctx context.Context, sessionID string) ([]Turn, error) {
	rows, err := s.rdb.QueryContext(ctx,
		`SELECT `+turnCols+` FROM turns WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list turns of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	var ts []Turn
	for rows.Next() {
		var t Turn
		var started, ended int64
		var used, size sql.NullInt64
		var cost sql.NullFloat64
		err := rows.Scan(&t.SessionID, &t.Seq, &t.Thread.Platform, &t.Thread.Channel, &t.Thread.Thread,
			&t.StopReason, &t.Error, &started, &ended, &used, &size, &cost, &t.Currency,
			&t.PromptChars, &t.ReplyChars)
		if err != nil {
			return nil, fmt.Errorf("list turns of session %q: %w", sessionID, err)
		}
		t.Started, t.Ended = fromMS(started), fromMS(ended)
		t.Used, t.UsedKnown = used.Int64, used.Valid
		t.Size, t.SizeKnown = size.Int64, size.Valid
		t.Cost, t.CostKnown = cost.Float64, cost.Valid
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list turns of session %q: %w", sessionID, err)
	}
	return ts, nil
}

// UsageTotals sums up the turns of a session. It does file I/O.
func (s *Store) UsageTotals(ctx context.Context, sessionID string) (Usage, error) {
	rows, err := s.rdb.QueryContext(ctx,
		`SELECT currency, COUNT(*), MAX(cost) FROM turns WHERE session_id = ? GROUP BY currency`, sessionID)
	if err != nil {
		return Usage{}, fmt.Errorf("usage of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	var u Usage
	for rows.Next() {
		var currency string
		var n int
		var cost sql.NullFloat64
		if err := rows.Scan(&currency, &n, &cost); err != nil {
			return Usage{}, fmt.Errorf("usage of session %q: %w", sessionID, err)
		}
		u.Turns += n
		if cost.Valid {
			if u.Cost == nil {
				u.Cost = map[string]float64{}
			}
			u.Cost[currency] = cost.Float64
		}
	}
	if err := rows.Err(); err != nil {
		return Usage{}, fmt.Errorf("usage of session %q: %w", sessionID, err)
	}
	return u, nil
}
