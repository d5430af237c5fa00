package store

import (
	"context"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// RunningTurn marks a prompt a thread accepted and has not answered yet:
// the gateway records it when the thread takes the message (queued,
// waiting for an agent, running) and forgets it once the end of its turn
// was delivered to the thread, when it begins no turn (stopped, refused),
// or when a shutdown that cut its turn off told the thread so. One left
// at start was cut off by a crash, or by a shutdown that could not tell
// the thread. A thread may have several, one per prompt, told apart (and
// ordered) by Started.
type RunningTurn struct {
	Thread    channels.ThreadRef
	SessionID string
	// Started is when the thread accepted the prompt (when its turn
	// started for a mark written then): the mark's key in its thread.
	Started time.Time
	// Prompt is the message that started the turn, so that a worker
	// taking the thread over can ask it again; zero in a mark that did
	// not keep it.
	Prompt TurnPrompt
	// Attempts is how many times the turn was taken over already: a
	// prompt asked again once is not asked a third time.
	Attempts int
}

// TurnPrompt is a turn's inbound message as the person wrote it: what is
// needed to hand it to the thread again. Files keep what a record can
// carry (see attach.Carry): their links and small texts, no image data.
type TurnPrompt struct {
	ID     channels.MessageID
	Author channels.Author
	Text   string
	Files  []channels.File
	Space  string
	Time   time.Time
}

// Inbound is p as a message of thread th again.
func (p TurnPrompt) Inbound(th channels.ThreadRef) channels.Inbound {
	return channels.Inbound{Thread: th, Author: p.Author, Text: p.Text, Files: p.Files, ID: p.ID, Space: p.Space, Time: p.Time}
}

// IsZero reports whether p holds no message (a mark that did not keep it).
func (p TurnPrompt) IsZero() bool {
	return p.ID == "" && p.Text == "" && len(p.Files) == 0
}

// MarkTurnRunning records r, replacing the mark of r.Thread with the same
// Started (other marks of the thread stay). It does file I/O.
func (s *Store) MarkTurnRunning(ctx context.Context, r RunningTurn) error {
	prompt := ""
	if !r.Prompt.IsZero() {
		r.Prompt.Time = normTime(r.Prompt.Time)
		b, err := MarshalTurnPrompt(r.Prompt)
		if err != nil {
			return fmt.Errorf("mark the turn in %s running: %w", r.Thread, err)
		}
		prompt = string(b)
	}
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO running_turns
(platform, channel, thread, session_id, started_ms, prompt, attempts) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.Thread.Platform, r.Thread.Channel, r.Thread.Thread, r.SessionID, toMS(r.Started), prompt, r.Attempts)
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

// RunningTurns returns the marks, oldest first (a thread's in the order
// its prompts were accepted). It does file I/O.
func (s *Store) RunningTurns(ctx context.Context) ([]RunningTurn, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT platform, channel, thread, session_id, started_ms, prompt, attempts
FROM running_turns ORDER BY started_ms, platform, channel, thread`)
	if err != nil {
		return nil, fmt.Errorf("list running turns: %w", err)
	}
	defer rows.Close()
	var rs []RunningTurn
	for rows.Next() {
		var r RunningTurn
		var started int64
		var prompt string
		if err := rows.Scan(&r.Thread.Platform, &r.Thread.Channel, &r.Thread.Thread, &r.SessionID, &started, &prompt, &r.Attempts); err != nil {
			return nil, fmt.Errorf("list running turns: %w", err)
		}
		r.Started = fromMS(started)
		if prompt != "" {
			if r.Prompt, err = UnmarshalTurnPrompt([]byte(prompt)); err != nil {
				return nil, fmt.Errorf("list running turns: the prompt of %s: %w", r.Thread, err)
			}
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list running turns: %w", err)
	}
	return rs, nil
}
