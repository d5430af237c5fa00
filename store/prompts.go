package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
)

// PromptStatus is where a permission prompt is in its life.
type PromptStatus string

// The prompt statuses. A prompt starts pending and is resolved once.
const (
	PromptPending   PromptStatus = "pending"
	PromptAnswered  PromptStatus = "answered"
	PromptExpired   PromptStatus = "expired"
	PromptCancelled PromptStatus = "cancelled"
)

// PromptOption is one answer an agent offers for a permission request.
type PromptOption struct {
	// ID is the ACP optionId.
	ID   string
	Name string
	// Kind is the ACP option kind (allow_once, allow_always, reject_once,
	// reject_always).
	Kind string
}

// Prompt is a permission request shown in a chat thread.
type Prompt struct {
	// ID is the gateway's id of the prompt, unique in the store.
	ID     string
	Thread channels.ThreadRef
	// SessionID, RequestID and ToolCallID name the ACP session, the
	// JSON-RPC request to answer and the tool call it is about.
	SessionID  string
	RequestID  string
	ToolCallID string
	Title      string
	// Kind is the tool kind, for display.
	Kind    string
	Options []PromptOption
	// MessageID is the chat message that shows the prompt, once posted.
	MessageID string
	Status    PromptStatus
	// Chosen is the option id picked; ChosenBy who picked it.
	Chosen   string
	ChosenBy string

	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: no deadline
	ResolvedAt time.Time // zero while pending
}

type optionJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

func encodeOptions(opts []PromptOption) (string, error) {
	w := make([]optionJSON, len(opts))
	for i, o := range opts {
		w[i] = optionJSON(o)
	}
	b, err := json.Marshal(w)
	return string(b), err
}

func decodeOptions(s string) ([]PromptOption, error) {
	var w []optionJSON
	if err := json.Unmarshal([]byte(s), &w); err != nil {
		return nil, err
	}
	if len(w) == 0 {
		return nil, nil
	}
	opts := make([]PromptOption, len(w))
	for i, o := range w {
		opts[i] = PromptOption(o)
	}
	return opts, nil
}

const promptCols = `id, platform, channel, thread, session_id, request_id, tool_call_id, title, kind,
	options, message_id, status, chosen, chosen_by, created_ms, expires_ms, resolved_ms`

func scanPrompt(sc interface{ Scan(...any) error }) (Prompt, error) {
	var p Prompt
	var opts string
	var created, expires, resolved int64
	err := sc.Scan(&p.ID, &p.Thread.Platform, &p.Thread.Channel, &p.Thread.Thread,
		&p.SessionID, &p.RequestID, &p.ToolCallID, &p.Title, &p.Kind,
		&opts, &p.MessageID, &p.Status, &p.Chosen, &p.ChosenBy, &created, &expires, &resolved)
	if err != nil {
		return Prompt{}, err
	}
	if p.Options, err = decodeOptions(opts); err != nil {
		return Prompt{}, fmt.Errorf("prompt %q: options: %w", p.ID, err)
	}
	p.CreatedAt, p.ExpiresAt, p.ResolvedAt = fromMS(created), fromMS(expires), fromMS(resolved)
	return p, nil
}

// AddPrompt records p. An empty Status means pending and a zero CreatedAt
// the current time. It does file I/O and fails if a prompt with p.ID exists.
func (s *Store) AddPrompt(ctx context.Context, p Prompt) error {
	if p.ID == "" {
		return errors.New("add prompt: empty id")
	}
	if p.Status == "" {
		p.Status = PromptPending
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now()
	}
	opts, err := encodeOptions(p.Options)
	if err != nil {
		return fmt.Errorf("add prompt %q: %w", p.ID, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO prompts (`+promptCols+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Thread.Platform, p.Thread.Channel, p.Thread.Thread,
		p.SessionID, p.RequestID, p.ToolCallID, p.Title, p.Kind,
		opts, p.MessageID, string(p.Status), p.Chosen, p.ChosenBy,
		toMS(p.CreatedAt), toMS(p.ExpiresAt), toMS(p.ResolvedAt))
	if err != nil {
		return fmt.Errorf("add prompt %q: %w", p.ID, err)
	}
	return nil
}

// SetPromptMessage records the chat message that shows prompt id. It does
// file I/O and returns ErrNotFound when there is no such prompt.
func (s *Store) SetPromptMessage(ctx context.Context, id, messageID string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE prompts SET message_id = ? WHERE id = ?`, messageID, id)
	if err != nil {
		return fmt.Errorf("set prompt %q message: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set prompt %q message: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("set prompt %q message: %w", id, ErrNotFound)
	}
	return nil
}

// ResolvePrompt moves prompt id from pending to status (answered, expired
// or cancelled), recording the chosen option, who chose it and when (a zero
// at means now). The first resolution wins: it reports false, changing
// nothing, when no pending prompt has that id (it was resolved already, or
// never added). It does file I/O.
func (s *Store) ResolvePrompt(ctx context.Context, id string, status PromptStatus, chosen, by string, at time.Time) (bool, error) {
	switch status {
	case PromptAnswered, PromptExpired, PromptCancelled:
	default:
		return false, fmt.Errorf("resolve prompt %q: status must be one of answered expired cancelled, got %q", id, status)
	}
	if at.IsZero() {
		at = now()
	}
	res, err := s.db.ExecContext(ctx, `
UPDATE prompts SET status = ?, chosen = ?, chosen_by = ?, resolved_ms = ?
WHERE id = ? AND status = 'pending'`,
		string(status), chosen, by, toMS(at), id)
	if err != nil {
		return false, fmt.Errorf("resolve prompt %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("resolve prompt %q: %w", id, err)
	}
	return n == 1, nil
}

// Prompt returns prompt id and whether it exists. It does file I/O.
func (s *Store) Prompt(ctx context.Context, id string) (Prompt, bool, error) {
	p, err := scanPrompt(s.rdb.QueryRowContext(ctx, `SELECT `+promptCols+` FROM prompts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Prompt{}, false, nil
	}
	if err != nil {
		return Prompt{}, false, fmt.Errorf("read prompt %q: %w", id, err)
	}
	return p, true, nil
}

// PendingPrompts returns the prompts still pending, oldest first. It does
// file I/O.
func (s *Store) PendingPrompts(ctx context.Context) ([]Prompt, error) {
	ps, err := queryPrompts(ctx, s.db, `WHERE status = 'pending' ORDER BY created_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list pending prompts: %w", err)
	}
	return ps, nil
}

// ExpireAll marks every pending prompt expired at time at and returns them,
// oldest first, as they are now (status expired), so a restarted gateway can
// edit the messages that show them. It does file I/O in one transaction.
func (s *Store) ExpireAll(ctx context.Context, at time.Time) ([]Prompt, error) {
	at = normTime(at)
	if at.IsZero() {
		at = now()
	}
	var ps []Prompt
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ps, err = queryPrompts(ctx, tx, `WHERE status = 'pending' ORDER BY created_ms, id`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE prompts SET status = 'expired', resolved_ms = ? WHERE status = 'pending'`, toMS(at))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("expire prompts: %w", err)
	}
	for i := range ps {
		ps[i].Status = PromptExpired
		ps[i].ResolvedAt = at
	}
	return ps, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryPrompts(ctx context.Context, q querier, where string, args ...any) ([]Prompt, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+promptCols+` FROM prompts `+strings.TrimSpace(where), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []Prompt
	for rows.Next() {
		p, err := scanPrompt(rows)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}
