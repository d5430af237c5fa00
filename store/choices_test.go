package store_test

import (
	"context"
	"maps"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

func TestChoices(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	st, err := store.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "a"}
	b := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "b"}
	for _, c := range [][3]string{{"model", "demo-fast"}, {"effort", "high"}, {"model", "demo-smart"}} {
		if err := st.SetChoice(ctx, a, c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetChoice(ctx, b, "model", "other"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Kept across a restart.
	st, err = store.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Choices(ctx, a)
	if want := map[string]string{"model": "demo-smart", "effort": "high"}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("choices of a: %v, %v; want %v", got, err, want)
	}
	if err := st.ClearChoices(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Choices(ctx, a); err != nil || len(got) != 0 {
		t.Fatalf("choices of a after clearing: %v, %v", got, err)
	}
	if got, err := st.Choices(ctx, b); err != nil || got["model"] != "other" {
		t.Fatalf("choices of b: %v, %v", got, err)
	}
}

// TestDeleteBindingForgetsChoices: a deleted thread's binding goes with
// its choices; another thread's stay.
func TestDeleteBindingForgetsChoices(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "a"}
	b := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "b"}
	for _, th := range []channels.ThreadRef{a, b} {
		if err := st.PutBinding(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: "s-" + th.Thread}); err != nil {
			t.Fatal(err)
		}
		if err := st.SetChoice(ctx, th, "model", "demo-smart"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DeleteBinding(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Choices(ctx, a); err != nil || len(got) != 0 {
		t.Errorf("choices of the deleted thread: %v, %v; want none", got, err)
	}
	if got, err := st.Choices(ctx, b); err != nil || got["model"] != "demo-smart" {
		t.Errorf("choices of the other thread: %v, %v", got, err)
	}
}
