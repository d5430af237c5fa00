package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// BusyTimeout is how long a statement waits for another process's lock on
// the database file before it fails with SQLITE_BUSY.
const BusyTimeout = 5 * time.Second

// ErrNotFound is returned when a method needs a row that does not exist.
var ErrNotFound = errors.New("not found")

// Readers is how many connections of a Store read, beside the one that
// writes.
const Readers = 4

// Store is the gateway's SQLite database. Its methods are safe for
// concurrent use; each does file I/O and blocks until SQLite answered or ctx
// ended.
type Store struct {
	db  *sql.DB // the one connection that writes (and migrates)
	rdb *sql.DB // Readers connections that only read (query_only)
	log *slog.Logger
}

// FileMode is the mode of the database file and of SQLite's -wal and -shm
// files beside it: they hold every transcript, so only the gateway's user
// may read them.
const FileMode fs.FileMode = 0o600

// Open opens (creating if needed) the database file at path, sets it up
// (WAL, busy timeout, foreign keys) and migrates its schema to the current
// version. A new file is created with FileMode whatever the umask, and
// the group and others lose any access to an existing one and to its -wal
// and -shm. It does file I/O. A nil logger discards logs. It fails when the
// file cannot be opened, was written by a newer gateway, or a migration
// fails (that migration is then rolled back).
func Open(ctx context.Context, path string, logger *slog.Logger) (*Store, error) {
	return OpenWith(ctx, path, Options{Logger: logger})
}

// Options configure OpenWith.
type Options struct {
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
	// BusyTimeout is how long a statement waits for another process's
	// lock on the file before it fails; zero means BusyTimeout. Tests of
	// a locked database make it short.
	BusyTimeout time.Duration
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	return open(ctx, path, o, migrations)
}

// open is OpenWith with a given list of migrations, so tests can build
// files of an older version.
func open(ctx context.Context, path string, o Options, steps []string) (*Store, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = BusyTimeout
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	if err := restrictFiles(abs); err != nil {
		return nil, fmt.Errorf("open store %q: %w", abs, err)
	}
	db, err := sql.Open("sqlite", dsn(abs, busy, false))
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", abs, err)
	}
	// One connection writes: goroutines queue in database/sql instead of
	// racing for SQLite's write lock. The connections are kept for the
	// life of the Store so their pragmas hold; the DSN sets them again if
	// one is replaced.
	keep(db, 1)
	s := &Store{db: db, log: logger}
	if err := s.init(ctx, steps); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %q: %w", abs, err)
	}
	// The readers, opened once the schema is current: in WAL mode a read
	// does not wait for a write in progress (it sees the last commit), so
	// the reads of every thread do not queue behind the writes.
	if s.rdb, err = sql.Open("sqlite", dsn(abs, busy, true)); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %q: %w", abs, err)
	}
	keep(s.rdb, Readers)
	return s, nil
}

// keep sets db's pool to n connections kept open.
func keep(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// restrictFiles creates the database file at abs with FileMode if it does
// not exist, and takes the group's and others' permissions away from it
// and from the -wal and -shm files that exist (an older gateway made them
// 0644). SQLite creates the -wal and -shm files with the mode of the
// database file, so they are private from the start too.
func restrictFiles(abs string) error {
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
	switch {
	case err == nil:
		f.Close()
	case !errors.Is(err, fs.ErrExist):
		return err
	}
	for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(p, perm&^0o077); err != nil {
				return fmt.Errorf("make %s private: %w", filepath.Base(p), err)
			}
		}
	}
	return nil
}

func (s *Store) init(ctx context.Context, steps []string) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		// Some file systems cannot hold a WAL; SQLite then keeps its
		// rollback journal, which is slower but correct.
		s.log.Warn("store: WAL mode not available", "journal_mode", mode)
	}
	return migrate(ctx, s.db, steps, s.log)
}

// dsn returns the driver's data source name for the absolute path abs: a
// file: URI (so any character in the path is escaped) with the pragmas every
// connection needs. A reader's connection refuses to write (query_only)
// and leaves the journal mode to the writer.
func dsn(abs string, busy time.Duration, reader bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", max(busy.Milliseconds(), 1)))
	if reader {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// Close closes the database. It waits for statements in progress, does file
// I/O (a WAL checkpoint) and returns the first error met.
func (s *Store) Close() error {
	rerr := s.rdb.Close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	if rerr != nil {
		return fmt.Errorf("close store's readers: %w", rerr)
	}
	return nil
}

// inTx runs f in a transaction (BEGIN IMMEDIATE) and commits it, or rolls
// it back when f or the commit fails.
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// toMS converts t to UTC Unix milliseconds, 0 for the zero time.
func toMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS is the inverse of toMS.
func fromMS(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// normTime returns t in UTC with millisecond precision, the form the store
// keeps, so times read back compare equal to times written.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return fromMS(toMS(t))
}

// now is the current time in the store's form.
func now() time.Time { return normTime(time.Now()) }
