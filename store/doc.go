// Package store keeps the gateway's durable state in one embedded SQLite
// file in the data directory: which chat thread is bound to which ACP
// session, the permission prompts still waiting for an answer, the turns
// running (so a restart can tell the threads it cut off), the usage and
// cost of every turn, and a readable transcript of every session.
//
// # Database
//
// [Open] uses modernc.org/sqlite (pure Go, driver "sqlite") in WAL mode with
// a busy timeout and foreign keys on. One connection writes, so the
// goroutines of one gateway take turns instead of competing for SQLite's
// write lock: under concurrent use they wait on the pool, never see
// SQLITE_BUSY, and a transaction is never interleaved with another
// goroutine's statements. Transactions begin IMMEDIATE and the busy timeout
// covers another process (such as `gateway check`) holding the lock for a
// moment. Beside it, a pool of [Readers] connections (query_only) serves
// the reads: in WAL mode a read sees the last commit and does not wait for
// a write in progress, so a thread's read never queues behind the writes
// of the others. (On a file system without WAL, a read waits for a write
// as SQLite's rollback journal makes it, up to the busy timeout.)
//
// The schema is versioned with SQLite's user_version: an ordered list of
// SQL steps, each applied once, in its own transaction, together with the
// version bump. A file written by a newer gateway (a higher version than
// this one knows) is refused rather than guessed at.
//
// Times are stored as UTC Unix milliseconds (0 for a zero time) and come back
// as UTC times with millisecond precision.
//
// The JSON kept in columns (entries.data, running_turns.prompt,
// open_messages.data, prompts.options) and by the cluster's backend is of
// wire types of their own (codec.go, wire.go), never a domain struct
// marshalled as it is: renaming a Go field does not change a file. A
// running turn's prompt, a thread's open messages and an entry as the
// cluster keeps it carry their version ("v"); one without was written
// before and is read still (wire_v0.go). The entries' data and the
// prompts' options go with the schema's version. The tests open files
// of earlier versions, dumped in testdata, and read every kind of row.
//
// # Transcript
//
// [Transcript] is a pure, in-memory builder that turns the session/update
// stream into an ordered list of [Entry] values by fixed rules:
//
//   - a message or thought chunk is appended to the very last entry only when
//     that entry is of the same kind (an assistant message, a thought, a
//     user message) and the chunk does not start a new agent message id;
//     otherwise it starts a new entry. Chunks go through
//     [projector.Accumulator], so deltas and cumulative snapshots give the
//     same text the projector shows. An entry keeps at most
//     [MaxEntryText] bytes of its text, and the whole text's length when it
//     is longer: an agent's 20 MiB chunk does not go into the database;
//   - tool_call and tool_call_update upsert one entry per tool call id with a
//     sparse merge; a status only moves forward;
//   - every plan and every change of modes, models or config options is a
//     new entry, so history is kept; available_commands_update changes the
//     latest meta entry in place; current_mode_update adds a mode_change
//     entry;
//   - the prompt the gateway sent and the permission requests it showed are
//     recorded by the caller ([Transcript.UserPrompt],
//     [Transcript.Permission]).
//
// [Transcript.Dirty] lists what changed since [Transcript.MarkClean], for
// [Store.SaveEntries]; [Store.LoadTranscript] rebuilds a builder after a
// restart so that appending continues where it stopped.
package store
