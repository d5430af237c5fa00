package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/acpgw/gateway/store"
)

// testOpenMessages: a thread's open messages are replaced as a whole,
// kept apart from other threads', and forgotten when set to none.
func testOpenMessages(t *testing.T, ctx context.Context, s store.Backend) {
	a, b := ref("c", "a"), ref("c/x", "a") // a channel id may hold a "/"
	if ms, err := s.OpenMessages(ctx, a); err != nil || len(ms) != 0 {
		t.Fatalf("open messages before any: %+v %v", ms, err)
	}
	tool := store.OpenMessage{Key: "tool:t1", ID: "m1", Lines: []store.OpenLine{{Key: "t1", Text: "🔧 ls · cancelled"}}}
	card := store.OpenMessage{Key: "card:1", ID: "m2", Card: true, Lines: []store.OpenLine{
		{Key: "t2", Text: "📖 a.go · completed"}, {Key: "t3", Text: "🔧 make · cancelled"},
	}}
	must(t, s.SetOpenMessages(ctx, a, []store.OpenMessage{tool}))
	must(t, s.SetOpenMessages(ctx, b, []store.OpenMessage{card}))
	must(t, s.SetOpenMessages(ctx, a, []store.OpenMessage{tool, card}))
	got, err := s.OpenMessages(ctx, a)
	must(t, err)
	if want := []store.OpenMessage{tool, card}; !reflect.DeepEqual(got, want) {
		t.Fatalf("open messages of a = %+v, want %+v", got, want)
	}
	got, err = s.OpenMessages(ctx, b)
	must(t, err)
	if want := []store.OpenMessage{card}; !reflect.DeepEqual(got, want) {
		t.Fatalf("open messages of b = %+v, want %+v", got, want)
	}
	must(t, s.SetOpenMessages(ctx, a, nil))
	if ms, err := s.OpenMessages(ctx, a); err != nil || len(ms) != 0 {
		t.Fatalf("open messages of a after forgetting them: %+v %v", ms, err)
	}
	// Forgetting what is not there is no error.
	must(t, s.SetOpenMessages(ctx, a, nil))
	if ms, _ := s.OpenMessages(ctx, b); len(ms) != 1 {
		t.Fatalf("open messages of b after forgetting a's: %+v", ms)
	}
}
