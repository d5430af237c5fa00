package store

import (
	"context"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// RunningTurn marks a turn in progress in a thread: the gateway records it
// when the turn starts and forgets it when the turn ends, or when a
// shutdown that cut the turn off told the thread so. One left at start
// was cut off by a crash, or by a shutdown that could not tell the thread.
type RunningTurn struct {
	Thread    channels.ThreadRef
	SessionID string
	Started   time.Time
}

// MarkTurnRunning records that a turn started in r.Thread, replacing the
// thread's earlier mark. It does file I/O.
func (s *Store) MarkTurnRunning(ctx context.Context, r RunningTurn) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO running_turns
(platform, channel, thread, session_id, started_ms) VALUES (?, ?, ?, ?, ?)`,
		r.Thread.Platform, r.Thread.Channel, r.Thread.Thread, r.SessionID, toMS(r.Started))
	if err != nil {
		return fmt.Errorf("mark the turn in %s running: %w", r.Thread, err)
	}
	return nil
}

// ClearTurnRunning forgets the mark of the turn of t that started at
// started (whatever turn, for a zero started); a later turn's mark stays.
// It is not an error if there is none. It does file I/O.
func (s *Store) ClearTurnRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM running_turns
WHERE platform = ? AND channel = ? AND thread = ? AND (? = 0 OR started_ms = ?)`,
		t.Platform, t.Channel, t.Thread, toMS(started), toMS(started))
	if err != nil {
		return fmt.Errorf("clear the running turn of %s: %w", t, err)
	}
	return nil
}

// RunningTurns returns the marked turns, oldest first. It does file I/O.
func (s *Store) RunningTurns(ctx context.Context) ([]RunningTurn, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT platform, channel, thread, session_id, started_ms
FROM running_turns ORDER BY started_ms, platform, channel, thread`)
	if err != nil {
		return nil, fmt.Errorf("list running turns: %w", err)
	}
	defer rows.Close()
	var rs []RunningTurn
	for rows.Next() {
		var r RunningTurn
		var started int64
		if err := rows.Scan(&r.Thread.Platform, &r.Thread.Channel, &r.Thread.Thread, &r.SessionID, &started); err != nil {
			return nil, fmt.Errorf("list running turns: %w", err)
		}
		r.Started = fromMS(started)
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list running turns: %w", err)
	}
	return rs, nil
}
