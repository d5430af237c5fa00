package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
)

// migrations are the schema steps, in order. Step i brings user_version
// from i to i+1. Append new steps; never edit or reorder released ones.
var migrations = []string{
	// 1: thread bindings and permission prompts.
	`
CREATE TABLE bindings (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	agent      TEXT NOT NULL,
	session_id TEXT NOT NULL,
	cwd        TEXT NOT NULL DEFAULT '',
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
CREATE INDEX bindings_session ON bindings (session_id);

CREATE TABLE prompts (
	id           TEXT PRIMARY KEY NOT NULL,
	platform     TEXT NOT NULL,
	channel      TEXT NOT NULL,
	thread       TEXT NOT NULL,
	session_id   TEXT NOT NULL,
	request_id   TEXT NOT NULL,
	tool_call_id TEXT NOT NULL,
	title        TEXT NOT NULL,
	kind         TEXT NOT NULL,
	options      TEXT NOT NULL, -- JSON: [{"id","name","kind"}]
	message_id   TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'expired', 'cancelled')),
	chosen       TEXT NOT NULL DEFAULT '',
	chosen_by    TEXT NOT NULL DEFAULT '',
	created_ms   INTEGER NOT NULL,
	expires_ms   INTEGER NOT NULL DEFAULT 0,
	resolved_ms  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX prompts_pending ON prompts (created_ms) WHERE status = 'pending';
`,
	// 2: session titles, per-turn usage and transcripts.
	`
ALTER TABLE bindings ADD COLUMN title TEXT NOT NULL DEFAULT '';

CREATE TABLE turns (
	session_id   TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	platform     TEXT NOT NULL,
	channel      TEXT NOT NULL,
	thread       TEXT NOT NULL,
	stop_reason  TEXT NOT NULL,
	error        TEXT NOT NULL,
	started_ms   INTEGER NOT NULL,
	ended_ms     INTEGER NOT NULL,
	used         INTEGER, -- NULL when the agent did not say
	size         INTEGER, -- NULL when the agent did not say
	cost         REAL,    -- NULL when the agent did not say
	currency     TEXT NOT NULL,
	prompt_chars INTEGER NOT NULL,
	reply_chars  INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE entries (
	session_id TEXT NOT NULL,
	seq        INTEGER NOT NULL,
	type       TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	data       TEXT NOT NULL, -- JSON, by type; see codec.go
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
`,
	// 3: the last inbound message seen per thread, for the catch-up at
	// start (a table of its own: one small row rewritten per message).
	`
CREATE TABLE seen (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	message_id TEXT NOT NULL,
	seen_ms    INTEGER NOT NULL,
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
`,
	// 4: turns running, so the next start can tell threads whose turn a
	// stop of the gateway cut off.
	`
CREATE TABLE running_turns (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	session_id TEXT NOT NULL,
	started_ms INTEGER NOT NULL,
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
`,
	// 5: budgets reached: the thread's next prompt waits for an
	// approver's Continue (a row per thread while it waits).
	`
CREATE TABLE budget_holds (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	budget     TEXT NOT NULL,
	reached_ms INTEGER NOT NULL,
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
`,
	// 6: the session options people chose in a thread (/model, …),
	// applied to each session of it.
	`
CREATE TABLE choices (
	platform TEXT NOT NULL,
	channel  TEXT NOT NULL,
	thread   TEXT NOT NULL,
	option   TEXT NOT NULL,
	value    TEXT NOT NULL,
	PRIMARY KEY (platform, channel, thread, option)
) WITHOUT ROWID;
`,
	// 7: the messages of a running turn still showing a tool running,
	// with their cut-off text (a row per thread, the list as JSON), so
	// that the next owner of the thread edits them when the turn is cut
	// off.
	`
CREATE TABLE open_messages (
	platform TEXT NOT NULL,
	channel  TEXT NOT NULL,
	thread   TEXT NOT NULL,
	data     TEXT NOT NULL, -- JSON: [{"key","id","card","lines":[{"key","text"}]}]
	PRIMARY KEY (platform, channel, thread)
) WITHOUT ROWID;
`,
	// 8: what a running turn was asked (JSON, see TurnPrompt) and how
	// often it was taken over, so that a worker taking over a thread can
	// ask it again, once.
	`
ALTER TABLE running_turns ADD COLUMN prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE running_turns ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
`,
	// 9: a mark per prompt a thread accepted (queued, starting, running,
	// or its answer not yet delivered), keyed by when it was accepted,
	// instead of one per thread.
	`
CREATE TABLE running_turns_new (
	platform   TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	session_id TEXT NOT NULL,
	started_ms INTEGER NOT NULL,
	prompt     TEXT NOT NULL DEFAULT '',
	attempts   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (platform, channel, thread, started_ms)
) WITHOUT ROWID;
INSERT INTO running_turns_new SELECT platform, channel, thread, session_id, started_ms, prompt, attempts FROM running_turns;
DROP TABLE running_turns;
ALTER TABLE running_turns_new RENAME TO running_turns;
`,
	// 10: the sessions of deleted threads, never to be attached again.
	`
CREATE TABLE sessions_gone (
	session_id TEXT PRIMARY KEY NOT NULL,
	deleted_ms INTEGER NOT NULL
) WITHOUT ROWID;
`,
	// 11: a channel's turns by their end, for the spend of a channel
	// since a time (the budget check before every prompt), which read
	// every turn before.
	`
CREATE INDEX turns_channel ON turns (platform, channel, ended_ms);
`,
}

// migrate applies the steps db has not seen yet, each in its own IMMEDIATE
// transaction that also sets user_version, so a step is applied completely
// once or not at all, even with two processes opening the file at once.
func migrate(ctx context.Context, db *sql.DB, steps []string, log *slog.Logger) error {
	for {
		done, err := migrateOne(ctx, db, steps, log)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next step, if any, and reports whether the schema
// is up to date.
func migrateOne(ctx context.Context, db *sql.DB, steps []string, log *slog.Logger) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("migrate: read version: %w", err)
	}
	switch {
	case v > len(steps):
		return false, fmt.Errorf("migrate: schema version %d is newer than this gateway knows (%d)", v, len(steps))
	case v == len(steps):
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, steps[v]); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	// PRAGMA takes no bound parameters; v+1 is an int.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, fmt.Errorf("migrate to version %d: set version: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate to version %d: commit: %w", v+1, err)
	}
	log.Info("store: schema migrated", "version", v+1)
	return v+1 == len(steps), nil
}
