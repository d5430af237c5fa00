package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/acpgw/gateway/channels"
)

// OpenMessage is a message of a thread's running turn that still shows
// a state that is not final (a tool line or a progress card with a
// running tool), with what it must show if the turn is cut off: the
// process that posted it may die, and whoever takes the thread up next
// edits it (the same message) to its cut-off text.
type OpenMessage struct {
	// Key is the delivery lane's key of the message ("tool:<id>",
	// "card:<n>").
	Key string
	// ID is the posted message's id.
	ID channels.MessageID
	// Card says the message is a progress card (channels.Carder) whose
	// rows are Lines; otherwise it is one tool line, Lines[0].
	Card bool
	// Lines are the cut-off text: a tool's line as cancelled, or a card's
	// rows (a finished row as it is, a running one as cancelled).
	Lines []OpenLine
}

// OpenLine is one line of an OpenMessage: a tool call's id and its text.
type OpenLine struct {
	Key  string
	Text string
}

// SetOpenMessages replaces the open messages recorded for t; none
// forgets them. It does file I/O.
func (s *Store) SetOpenMessages(ctx context.Context, t channels.ThreadRef, ms []OpenMessage) error {
	var err error
	if len(ms) == 0 {
		_, err = s.db.ExecContext(ctx, `DELETE FROM open_messages WHERE platform = ? AND channel = ? AND thread = ?`,
			t.Platform, t.Channel, t.Thread)
	} else {
		var b []byte
		if b, err = EncodeOpenMessages(ms); err != nil {
			return fmt.Errorf("record the open messages of %s: %w", t, err)
		}
		_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO open_messages (platform, channel, thread, data) VALUES (?, ?, ?, ?)`,
			t.Platform, t.Channel, t.Thread, string(b))
	}
	if err != nil {
		return fmt.Errorf("record the open messages of %s: %w", t, err)
	}
	return nil
}

// OpenMessages returns the open messages recorded for t, in the order
// they were set. It does file I/O.
func (s *Store) OpenMessages(ctx context.Context, t channels.ThreadRef) ([]OpenMessage, error) {
	var data string
	err := s.rdb.QueryRowContext(ctx, `SELECT data FROM open_messages WHERE platform = ? AND channel = ? AND thread = ?`,
		t.Platform, t.Channel, t.Thread).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the open messages of %s: %w", t, err)
	}
	ms, err := DecodeOpenMessages([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("read the open messages of %s: %w", t, err)
	}
	return ms, nil
}
