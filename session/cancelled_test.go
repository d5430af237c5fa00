package session_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

// A router whose context ends at once (a start that failed right after
// it) stops without logging an error: there was nothing wrong.
func TestRunCancelledAtOnceLogsNoError(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := session.New(session.Options{Store: st, Logger: testlog.FailOnError(t)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.Run(ctx); err != nil {
		t.Errorf("Run = %v", err)
	}
}
