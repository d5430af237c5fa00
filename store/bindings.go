package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Binding ties a chat thread to an ACP session of one configured agent.
type Binding struct {
	Thread channels.ThreadRef
	// Agent is the name of the configured agent that runs the session.
	Agent     string
	SessionID string
	// Cwd is the session's working directory.
	Cwd string
	// Title is the session's title when the agent gave one.
	Title   string
	Created time.Time
	Updated time.Time
}

const bindingCols = `platform, channel, thread, agent, session_id, cwd, title, created_ms, updated_ms`

func scanBinding(sc interface{ Scan(...any) error }) (Binding, error) {
	var b Binding
	var created, updated int64
	err := sc.Scan(&b.Thread.Platform, &b.Thread.Channel, &b.Thread.Thread,
		&b.Agent, &b.SessionID, &b.Cwd, &b.Title, &created, &updated)
	b.Created, b.Updated = fromMS(created), fromMS(updated)
	return b, err
}

// Binding returns the binding of thread t and whether there is one. It does
// file I/O.
func (s *Store) Binding(ctx context.Context, t channels.ThreadRef) (Binding, bool, error) {
	row := s.rdb.QueryRowContext(ctx,
		`SELECT `+bindingCols+` FROM bindings WHERE platform = ? AND channel = ? AND thread = ?`,
		t.Platform, t.Channel, t.Thread)
	b, err := scanBinding(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Binding{}, false, nil
	}
	if err != nil {
		return Binding{}, false, fmt.Errorf("read binding %s: %w", t, err)
	}
	return b, true, nil
}

// PutBinding stores b, replacing the binding of b.Thread if there is one
// (its Created time is kept then). A zero Created or Updated is set to the
// current time. It does file I/O.
func (s *Store) PutBinding(ctx context.Context, b Binding) error {
	if err := putBinding(ctx, s.db, b); err != nil {
		return fmt.Errorf("put binding %s: %w", b.Thread, err)
	}
	return nil
}

// ErrSessionGone is AttachSession's answer for a session of a deleted
// thread; ErrSessionTaken for one another thread is bound to.
var (
	ErrSessionGone  = errors.New("the session was a deleted thread's")
	ErrSessionTaken = errors.New("another thread is bound to the session")
)

// AttachSession binds b.Thread to b.SessionID unless the session was a
// deleted thread's (ErrSessionGone) or another thread is bound to it
// (ErrSessionTaken), in one transaction. It does file I/O.
func (s *Store) AttachSession(ctx context.Context, b Binding) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions_gone WHERE session_id = ?`, b.SessionID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrSessionGone
		}
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM bindings WHERE session_id = ?
AND NOT (platform = ? AND channel = ? AND thread = ?)`,
			b.SessionID, b.Thread.Platform, b.Thread.Channel, b.Thread.Thread).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrSessionTaken
		}
		return putBinding(ctx, tx, b)
	})
	if err != nil {
		return fmt.Errorf("attach session %q to %s: %w", b.SessionID, b.Thread, err)
	}
	return nil
}

// SessionGone reports whether session id was a deleted thread's. It does
// file I/O.
func (s *Store) SessionGone(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions_gone WHERE session_id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("read whether session %q is gone: %w", id, err)
	}
	return n > 0, nil
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func putBinding(ctx context.Context, db execer, b Binding) error {
	at := now()
	if b.Updated.IsZero() {
		b.Updated = at
	}
	if b.Created.IsZero() {
		b.Created = b.Updated
	}
	_, err := db.ExecContext(ctx, `
INSERT INTO bindings (`+bindingCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (platform, channel, thread) DO UPDATE SET
	agent = excluded.agent,
	session_id = excluded.session_id,
	cwd = excluded.cwd,
	title = excluded.title,
	updated_ms = excluded.updated_ms`,
		b.Thread.Platform, b.Thread.Channel, b.Thread.Thread, b.Agent, b.SessionID, b.Cwd, b.Title,
		toMS(b.Created), toMS(b.Updated))
	return err
}

// DeleteBinding removes the binding of thread t and what is kept per
// thread besides: the options chosen in it (choices), its budget hold
// and the last message seen in it; it is not an error if there is none.
// The session's transcript and turns are kept, and the session is
// recorded gone (sessions_gone), never to be attached again. It does
// file I/O.
func (s *Store) DeleteBinding(ctx context.Context, t channels.ThreadRef) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO sessions_gone (session_id, deleted_ms)
SELECT session_id, ? FROM bindings WHERE platform = ? AND channel = ? AND thread = ? AND session_id != ''`,
			toMS(now()), t.Platform, t.Channel, t.Thread)
		if err != nil {
			return err
		}
		for _, table := range []string{"bindings", "choices", "budget_holds", "seen"} {
			_, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE platform = ? AND channel = ? AND thread = ?`,
				t.Platform, t.Channel, t.Thread)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete binding %s: %w", t, err)
	}
	return nil
}

// Bindings returns every binding, ordered by platform, channel and thread.
// It does file I/O.
func (s *Store) Bindings(ctx context.Context) ([]Binding, error) {
	bs, err := s.bindingsWhere(ctx, ``)
	if err != nil {
		return nil, fmt.Errorf("list bindings: %w", err)
	}
	return bs, nil
}

// ChannelBindings returns the bindings of the threads of channel
// (platform, channel), by thread: a range of the primary key. It does
// file I/O.
func (s *Store) ChannelBindings(ctx context.Context, platform, channel string) ([]Binding, error) {
	bs, err := s.bindingsWhere(ctx, `WHERE platform = ? AND channel = ?`, platform, channel)
	if err != nil {
		return nil, fmt.Errorf("list the bindings of channel %s/%s: %w", platform, channel, err)
	}
	return bs, nil
}

func (s *Store) bindingsWhere(ctx context.Context, where string, args ...any) ([]Binding, error) {
	rows, err := s.rdb.QueryContext(ctx,
		`SELECT `+bindingCols+` FROM bindings `+where+` ORDER BY platform, channel, thread`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bs []Binding
	for rows.Next() {
		b, err := scanBinding(rows)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, rows.Err()
}
