package owner

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/acpgw/gateway/channels"
)

// A thread's saves are written in the order asked for; a keyed write
// replaces one of its key not begun yet and goes behind the others;
// after runs once what was queued before it is written; a write that
// keeps failing is told; once closed, a write is done at once.
func TestSavesInOrderAndReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSaves(slog.New(slog.DiscardHandler), channels.ThreadRef{Platform: "p", Channel: "c", Thread: "t"}, t.Context())
		var mu sync.Mutex
		var wrote []string
		note := func(what string) func(context.Context) error {
			return func(context.Context) error {
				mu.Lock()
				wrote = append(wrote, what)
				mu.Unlock()
				return nil
			}
		}
		hold := make(chan struct{})
		never := func(err error) { t.Errorf("a write failed: %v", err) }
		s.write("", "first", func(ctx context.Context) error { <-hold; return note("first")(ctx) }, never)
		s.write("open", "open 1", note("open 1"), never)
		s.write("", "turn", note("turn"), never)
		s.write("open", "open 2", note("open 2"), never)
		done := make(chan struct{})
		s.after(func() { close(done) })
		var failed error
		s.write("", "broken", func(context.Context) error { return errors.New("disk full") }, func(err error) { failed = err })
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("after ran before the writes queued ahead of it")
		default:
		}
		close(hold)
		<-done
		s.close()
		want := []string{"first", "turn", "open 2"}
		if !slices.Equal(wrote, want) {
			t.Errorf("written %v, want %v (open 1 replaced by open 2, behind the turn)", wrote, want)
		}
		if failed == nil || failed.Error() != "disk full" {
			t.Errorf("the failing write was told %v, want its last error", failed)
		}
		s.write("", "late", note("late"), never)
		if wrote[len(wrote)-1] != "late" {
			t.Errorf("after close a write was not done at once: %v", wrote)
		}
	})
}
