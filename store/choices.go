package store

import (
	"context"
	"fmt"

	"github.com/acpgw/gateway/channels"
)

// SetChoice records that people chose value for the session option
// option in thread t (replacing an earlier choice). It does file I/O.
func (s *Store) SetChoice(ctx context.Context, t channels.ThreadRef, option, value string) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO choices (platform, channel, thread, option, value)
VALUES (?, ?, ?, ?, ?)`, t.Platform, t.Channel, t.Thread, option, value)
	if err != nil {
		return fmt.Errorf("save the choice of %s in %s: %w", option, t, err)
	}
	return nil
}

// Choices returns the values chosen in thread t, by option. It does file
// I/O.
func (s *Store) Choices(ctx context.Context, t channels.ThreadRef) (map[string]string, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT option, value FROM choices
WHERE platform = ? AND channel = ? AND thread = ? ORDER BY option`, t.Platform, t.Channel, t.Thread)
	if err != nil {
		return nil, fmt.Errorf("read the choices of %s: %w", t, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var o, v string
		if err := rows.Scan(&o, &v); err != nil {
			return nil, fmt.Errorf("read the choices of %s: %w", t, err)
		}
		out[o] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the choices of %s: %w", t, err)
	}
	return out, nil
}

// DropChoice forgets the choice of option in thread t (one the agent
// refused), keeping the others. It does file I/O.
func (s *Store) DropChoice(ctx context.Context, t channels.ThreadRef, option string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM choices WHERE platform = ? AND channel = ? AND thread = ? AND option = ?`, t.Platform, t.Channel, t.Thread, option)
	if err != nil {
		return fmt.Errorf("forget the choice of %s in %s: %w", option, t, err)
	}
	return nil
}

// ClearChoices forgets the choices of thread t. It does file I/O.
func (s *Store) ClearChoices(ctx context.Context, t channels.ThreadRef) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM choices WHERE platform = ? AND channel = ? AND thread = ?`, t.Platform, t.Channel, t.Thread)
	if err != nil {
		return fmt.Errorf("forget the choices of %s: %w", t, err)
	}
	return nil
}
