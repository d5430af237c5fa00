package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// openTest opens a store in a fresh directory and closes it when the test
// ends.
func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenFromEmpty(t *testing.T) {
	s := openTest(t)
	for _, tc := range []struct{ pragma, want string }{
		{"user_version", fmt.Sprint(len(migrations))},
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", fmt.Sprint(BusyTimeout.Milliseconds())},
	} {
		if got := pragma(t, s.db, tc.pragma); got != tc.want {
			t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
		}
	}
	rows, err := s.db.QueryContext(t.Context(), `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	want := []string{"bindings", "budget_holds", "choices", "entries", "open_messages", "prompts", "running_turns", "seen", "sessions_gone", "turns"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := open(ctx, path, Options{}, migrations[:1])
	if err != nil {
		t.Fatalf("open at version 1: %v", err)
	}
	if got := pragma(t, old.db, "user_version"); got != "1" {
		t.Fatalf("user_version = %s, want 1", got)
	}
	// A row as a version-1 gateway wrote it: no title column yet.
	_, err = old.db.ExecContext(ctx, `INSERT INTO bindings (platform, channel, thread, agent, session_id, cwd, created_ms, updated_ms)
VALUES ('discord', 'c1', 't1', 'claude', 'sess-1', '/w', 1000, 2000)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.AddPrompt(ctx, Prompt{ID: "p1", SessionID: "sess-1", CreatedAt: time.UnixMilli(5000)}); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open migrating from version 1: %v", err)
	}
	defer s.Close()
	if got, want := pragma(t, s.db, "user_version"), fmt.Sprint(len(migrations)); got != want {
		t.Errorf("user_version = %s, want %s", got, want)
	}
	th := channels.ThreadRef{Platform: "discord", Channel: "c1", Thread: "t1"}
	got, ok, err := s.Binding(ctx, th)
	if err != nil || !ok {
		t.Fatalf("Binding = _, %v, %v; want the old row", ok, err)
	}
	want := Binding{Thread: th, Agent: "claude", SessionID: "sess-1", Cwd: "/w",
		Created: time.UnixMilli(1000).UTC(), Updated: time.UnixMilli(2000).UTC()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("migrated binding (-want +got):\n%s", diff)
	}
	if _, ok, err := s.Prompt(ctx, "p1"); err != nil || !ok {
		t.Errorf("Prompt(p1) = _, %v, %v; want the old row", ok, err)
	}
	// The tables of version 2 work.
	if err := s.AddTurn(ctx, Turn{SessionID: "sess-1"}); err != nil {
		t.Errorf("AddTurn after migration: %v", err)
	}
	if err := s.PutBinding(ctx, Binding{Thread: th, Agent: "claude", SessionID: "sess-1", Title: "Fix CI"}); err != nil {
		t.Errorf("PutBinding after migration: %v", err)
	}
}

func TestMigrationFailureRollsBack(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bad.db")
	steps := []string{migrations[0], `CREATE TABLE half (x INTEGER); THIS IS NOT SQL;`}
	if s, err := open(ctx, path, Options{}, steps); err == nil {
		s.Close()
		t.Fatal("open with a broken step: no error")
	}
	s, err := open(ctx, path, Options{}, steps[:1])
	if err != nil {
		t.Fatalf("reopen at version 1: %v", err)
	}
	defer s.Close()
	if got := pragma(t, s.db, "user_version"); got != "1" {
		t.Errorf("user_version = %s, want 1 (the broken step rolled back)", got)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'half'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("table of the broken step exists")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer schema: no error")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open error = %v, want it to say the schema is newer", err)
	}
}

func TestOpenOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir with spaces?#%")
	path := filepath.Join(dir, "gate way?x=1#frag%20.db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	defer s.Close()
	var file string
	if err := s.db.QueryRowContext(t.Context(), `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	if file != path {
		t.Errorf("database file = %q, want %q", file, path)
	}
}

// TestConcurrentWriters runs many goroutines writing through one Store and,
// at the same time, through a second Store on the same file (as a second
// process would): no call may fail with SQLITE_BUSY or anything else.
func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "busy.db")
	a, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	const workers, ops = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*ops)
	for w := range 2 * workers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := range ops {
				errs <- concurrentOp(ctx, s, w, i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	bs, err := a.Bindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(bs), 2*workers; got != want {
		t.Errorf("bindings = %d, want %d", got, want)
	}
	for w := range 2 * workers {
		sid := fmt.Sprintf("s%d", w)
		u, err := b.UsageTotals(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if u.Turns != ops {
			t.Errorf("turns of %s = %d, want %d", sid, u.Turns, ops)
		}
		es, err := a.Entries(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != ops {
			t.Errorf("entries of %s = %d, want %d", sid, len(es), ops)
		}
	}
}

func concurrentOp(ctx context.Context, s *Store, w, i int) error {
	sid := fmt.Sprintf("s%d", w)
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: sid}
	if err := s.PutBinding(ctx, Binding{Thread: th, Agent: "demo", SessionID: sid, Title: fmt.Sprint(i)}); err != nil {
		return err
	}
	if err := s.AddTurn(ctx, Turn{Thread: th, SessionID: sid, CostKnown: true, Cost: 0.5, Currency: "USD"}); err != nil {
		return err
	}
	e := Entry{Seq: i, Time: time.UnixMilli(int64(i + 1)), Body: Message{Role: RoleAssistant, Text: fmt.Sprint(i)}}
	if err := s.SaveEntries(ctx, sid, []Entry{e}); err != nil {
		return err
	}
	id := fmt.Sprintf("%s-%d", sid, i)
	if err := s.AddPrompt(ctx, Prompt{ID: id, Thread: th, SessionID: sid}); err != nil {
		return err
	}
	_, err := s.ResolvePrompt(ctx, id, PromptAnswered, "allow", "u", time.UnixMilli(9))
	return err
}

// TestCloseStopsEverything opens and uses a store inside a synctest bubble:
// the test fails if a goroutine started for the store outlives Close.
func TestCloseStopsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leak.db")
	synctest.Test(t, func(t *testing.T) {
		s, err := Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutBinding(t.Context(), Binding{Thread: channels.ThreadRef{Platform: "web"}, SessionID: "s"}); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
}

// withUmask sets the process's umask for the rest of the test. The umask
// is the process's, so tests that use it do not run in parallel.
func withUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// fileModes returns the permission bits of the database file and of its
// -wal and -shm, "absent" for a file that does not exist.
func fileModes(t *testing.T, path string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		st, err := os.Stat(path + suffix)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			got["db"+suffix] = "absent"
		case err != nil:
			t.Fatal(err)
		default:
			got["db"+suffix] = st.Mode().Perm().String()
		}
	}
	return got
}

func TestFilesArePrivate(t *testing.T) {
	withUmask(t, 0o022)
	private := fs.FileMode(0o600).String() // the owner only, whatever FileMode says
	t.Run("new", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "gateway.db")
		s, err := Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.PutBinding(t.Context(), Binding{Thread: channels.ThreadRef{Platform: "web", Channel: "c", Thread: "t"}, Agent: "a", SessionID: "s"}); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"db": private, "db-wal": private, "db-shm": private}
		if diff := cmp.Diff(want, fileModes(t, path)); diff != "" {
			t.Errorf("after a write (-want +got):\n%s", diff)
		}
		if _, err := s.db.ExecContext(t.Context(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		if err := s.PutBinding(t.Context(), Binding{Thread: channels.ThreadRef{Platform: "web", Channel: "c", Thread: "u"}, Agent: "a", SessionID: "s2"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, fileModes(t, path)); diff != "" {
			t.Errorf("after a checkpoint and a write (-want +got):\n%s", diff)
		}
	})
	t.Run("left readable by an older gateway", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "gateway.db")
		s, err := Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		// The files as an older gateway left them after a crash: the
		// database and an empty WAL, both 0644.
		if err := os.WriteFile(path+"-wal", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal"} {
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err = Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		want := map[string]string{"db": private, "db-wal": private, "db-shm": private}
		if diff := cmp.Diff(want, fileModes(t, path)); diff != "" {
			t.Errorf("after reopening (-want +got):\n%s", diff)
		}
	})
}
