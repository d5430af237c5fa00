package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SaveEntries stores es as entries of session sessionID, replacing saved
// entries with the same Seq, in one transaction: all are saved or none. It
// does file I/O.
func (s *Store) SaveEntries(ctx context.Context, sessionID string, es []Entry) error {
	if len(es) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `
INSERT INTO entries (session_id, seq, type, created_ms, updated_ms, data) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id, seq) DO UPDATE SET
	type = excluded.type,
	created_ms = excluded.created_ms,
	updated_ms = excluded.updated_ms,
	data = excluded.data`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, e := range es {
			typ, data, err := encodeBody(e.Body)
			if err != nil {
				return fmt.Errorf("entry %d: %w", e.Seq, err)
			}
			if e.Seq < 0 {
				return fmt.Errorf("entry %d: negative seq", e.Seq)
			}
			if _, err := stmt.ExecContext(ctx, sessionID, e.Seq, string(typ), toMS(e.Time), toMS(e.Updated), string(data)); err != nil {
				return fmt.Errorf("entry %d: %w", e.Seq, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save transcript of session %q: %w", sessionID, err)
	}
	return nil
}

// Entries returns the saved entries of session sessionID in Seq order. It
// does file I/O and fails on an entry it cannot decode.
func (s *Store) Entries(ctx context.Context, sessionID string) ([]Entry, error) {
	rows, err := s.rdb.QueryContext(ctx,
		`SELECT seq, type, created_ms, updated_ms, data FROM entries WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("read transcript of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	var es []Entry
	for rows.Next() {
		var e Entry
		var typ string
		var created, updated int64
		var data []byte
		if err := rows.Scan(&e.Seq, &typ, &created, &updated, &data); err != nil {
			return nil, fmt.Errorf("read transcript of session %q: %w", sessionID, err)
		}
		e.Time, e.Updated = fromMS(created), fromMS(updated)
		if e.Body, err = decodeBody(EntryType(typ), data); err != nil {
			return nil, fmt.Errorf("read transcript of session %q: entry %d: %w", sessionID, e.Seq, err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read transcript of session %q: %w", sessionID, err)
	}
	return es, nil
}

// LoadTranscript rebuilds the transcript of session sessionID from its
// saved entries, so that applying updates continues where it stopped (an
// empty transcript when nothing was saved). Chunk accumulation starts
// afresh. It does file I/O and fails when an entry cannot be decoded or
// one is missing.
func (s *Store) LoadTranscript(ctx context.Context, sessionID string) (*Transcript, error) {
	es, err := s.Entries(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	t, err := restoreTranscript(es)
	if err != nil {
		return nil, fmt.Errorf("load transcript of session %q: %w", sessionID, err)
	}
	return t, nil
}
