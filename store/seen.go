package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Seen is the last inbound message a running gateway handled in a
// thread: where the catch-up reads on from.
type Seen struct {
	Binding
	// MessageID is the platform's id of the last message handled.
	MessageID channels.MessageID
	// At is when it was handled.
	At time.Time
}

// MarkSeen records id as the last message handled in thread t, at at. It
// does file I/O.
func (s *Store) MarkSeen(ctx context.Context, t channels.ThreadRef, id channels.MessageID, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `
INSERT INTO seen (platform, channel, thread, message_id, seen_ms) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (platform, channel, thread) DO UPDATE SET
	message_id = excluded.message_id,
	seen_ms = excluded.seen_ms`,
		t.Platform, t.Channel, t.Thread, string(id), toMS(normTime(at)))
	if err != nil {
		return fmt.Errorf("mark seen %s: %w", t, err)
	}
	return nil
}

// LastSeen returns the id of the last message marked seen in thread t,
// false when none was. It does file I/O.
func (s *Store) LastSeen(ctx context.Context, t channels.ThreadRef) (channels.MessageID, bool, error) {
	var id string
	err := s.rdb.QueryRowContext(ctx, `SELECT message_id FROM seen WHERE platform = ? AND channel = ? AND thread = ?`,
		t.Platform, t.Channel, t.Thread).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("last seen in %s: %w", t, err)
	}
	return channels.MessageID(id), true, nil
}

// SeenSince returns the threads whose last message was handled at or
// after since, most recent first, with their bindings. A thread without
// a binding is returned with only its ref in Binding: its first message
// was handled, and the gateway stopped before its session was saved (a
// crash while the agent started), so what people wrote there since is
// to be read too. A deleted thread has no mark (DeleteBinding). It does
// file I/O.
func (s *Store) SeenSince(ctx context.Context, since time.Time) ([]Seen, error) {
	rows, err := s.rdb.QueryContext(ctx, `
SELECT s.platform, s.channel, s.thread, COALESCE(b.agent, ''), COALESCE(b.session_id, ''), COALESCE(b.cwd, ''),
	COALESCE(b.title, ''), COALESCE(b.created_ms, 0), COALESCE(b.updated_ms, 0), s.message_id, s.seen_ms
FROM seen s LEFT JOIN bindings b USING (platform, channel, thread)
WHERE s.seen_ms >= ?
ORDER BY s.seen_ms DESC, s.platform, s.channel, s.thread`, toMS(normTime(since)))
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	defer rows.Close()
	var out []Seen
	for rows.Next() {
		var sn Seen
		var created, updated, at int64
		var id string
		b := &sn.Binding
		if err := rows.Scan(&b.Thread.Platform, &b.Thread.Channel, &b.Thread.Thread,
			&b.Agent, &b.SessionID, &b.Cwd, &b.Title, &created, &updated, &id, &at); err != nil {
			return nil, fmt.Errorf("list seen threads: %w", err)
		}
		b.Created, b.Updated = fromMS(created), fromMS(updated)
		sn.MessageID, sn.At = channels.MessageID(id), fromMS(at)
		out = append(out, sn)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	return out, nil
}
