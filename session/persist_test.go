package session_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// lockDB holds the write lock of the gateway's database from another
// connection, as a backup or an operator's sqlite3 would, until release.
func lockDB(t *testing.T, dir string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "gateway.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
			t.Error(err)
		}
		conn.Close()
		db.Close()
	}
	t.Cleanup(release)
	return release
}

const notSaved = "This conversation could not be saved; it will not survive a restart."

// A binding that meets a locked database is written again until the lock
// clears: the session survives a restart, and nobody is bothered.
func TestBindingIsSavedWhenTheLockClears(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, busy: 20 * time.Millisecond})
	th := e.rec.Thread("locked")
	release := lockDB(t, e.dir)
	e.say(th, ann, "echo saved")
	e.logs.waitFor(t, e.ctx(), "cannot save the binding; trying again")
	release()
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", end)
	}
	b, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok || b.SessionID == "" {
		t.Errorf("binding after the lock cleared: %+v, %v, %v", b, ok, err)
	}
	for _, op := range e.rec.OpsIn(th) {
		if strings.Contains(op.Text, notSaved) {
			t.Errorf("the thread was told %q though the binding was saved", op.Text)
		}
	}
}

// A binding that cannot be written, however often it is tried, is not
// lost silently: the thread is told, and the turn still runs.
func TestBindingThatCannotBeSavedIsToldOf(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, busy: 20 * time.Millisecond})
	th := e.rec.Thread("locked")
	release := lockDB(t, e.dir)
	e.say(th, ann, "echo unsaved")
	e.waitOp(th, "the notice", func(op channeltest.Op) bool {
		return op.Kind == channels.KindNotice && strings.Contains(op.Text, notSaved)
	})
	release()
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", end)
	}
	if got := e.text(th); got != "unsaved" {
		t.Errorf("reply %q, want the turn to run", got)
	}
	if _, ok, _ := e.st.Binding(e.ctx(), th); ok {
		t.Error("a binding was stored; the test wanted the write to fail")
	}
	if !strings.Contains(e.logs.String(), "cannot save the binding; the session will not survive a restart") {
		t.Errorf("the log does not say the binding was lost:\n%s", e.logs.String())
	}
}
