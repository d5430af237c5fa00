package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func testPrompt(id string, created int64) Prompt {
	return Prompt{
		ID:         id,
		Thread:     channels.ThreadRef{Platform: "discord", Channel: "c", Thread: "t"},
		SessionID:  "sess",
		RequestID:  "req-" + id,
		ToolCallID: "call-" + id,
		Title:      "Run `rm -rf build`",
		Kind:       "execute",
		Options: []PromptOption{
			{ID: "allow", Name: "Allow", Kind: "allow_once"},
			{ID: "reject", Name: "Reject", Kind: "reject_once"},
		},
		Status:    PromptPending,
		CreatedAt: time.UnixMilli(created).UTC(),
		ExpiresAt: time.UnixMilli(created + 600_000).UTC(),
	}
}

func TestPrompts(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	p1, p2, p3 := testPrompt("p1", 1000), testPrompt("p2", 2000), testPrompt("p3", 3000)
	p2.Options = nil
	p3.Status = "" // defaults to pending
	for _, p := range []Prompt{p2, p1, p3} {
		if err := s.AddPrompt(ctx, p); err != nil {
			t.Fatalf("AddPrompt(%s): %v", p.ID, err)
		}
	}
	p3.Status = PromptPending
	if err := s.AddPrompt(ctx, p1); err == nil {
		t.Error("AddPrompt with a duplicate id: no error")
	}
	if err := s.AddPrompt(ctx, Prompt{}); err == nil {
		t.Error("AddPrompt with an empty id: no error")
	}

	if err := s.SetPromptMessage(ctx, "p1", "m-42"); err != nil {
		t.Fatal(err)
	}
	p1.MessageID = "m-42"
	if err := s.SetPromptMessage(ctx, "nope", "m"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetPromptMessage(unknown) = %v, want ErrNotFound", err)
	}

	at := time.UnixMilli(4000).UTC()
	resolves := []struct {
		name   string
		id     string
		status PromptStatus
		want   bool
		err    bool
	}{
		{"first answer wins", "p1", PromptAnswered, true, false},
		{"second answer loses", "p1", PromptCancelled, false, false},
		{"unknown prompt", "nope", PromptAnswered, false, false},
		{"pending is not a resolution", "p2", PromptPending, false, true},
		{"cancel", "p2", PromptCancelled, true, false},
	}
	for _, tc := range resolves {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ResolvePrompt(ctx, tc.id, tc.status, "allow", "U1", at)
			if (err != nil) != tc.err {
				t.Fatalf("ResolvePrompt error = %v, want error %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("ResolvePrompt = %v, want %v", got, tc.want)
			}
		})
	}
	p1.Status, p1.Chosen, p1.ChosenBy, p1.ResolvedAt = PromptAnswered, "allow", "U1", at
	p2.Status, p2.Chosen, p2.ChosenBy, p2.ResolvedAt = PromptCancelled, "allow", "U1", at

	for _, want := range []Prompt{p1, p2, p3} {
		got, ok, err := s.Prompt(ctx, want.ID)
		if err != nil || !ok {
			t.Fatalf("Prompt(%s) = _, %v, %v", want.ID, ok, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Prompt(%s) (-want +got):\n%s", want.ID, diff)
		}
	}
	if _, ok, err := s.Prompt(ctx, "nope"); ok || err != nil {
		t.Errorf("Prompt(unknown) = _, %v, %v; want false, nil", ok, err)
	}

	pending, err := s.PendingPrompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Prompt{p3}, pending); diff != "" {
		t.Errorf("PendingPrompts (-want +got):\n%s", diff)
	}
}

func TestExpireAll(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	var want []Prompt
	for i := range 4 {
		p := testPrompt(fmt.Sprintf("p%d", i), int64(1000*(i+1)))
		if err := s.AddPrompt(ctx, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if ok, err := s.ResolvePrompt(ctx, "p1", PromptAnswered, "allow", "U", time.UnixMilli(1500)); !ok || err != nil {
		t.Fatalf("ResolvePrompt = %v, %v", ok, err)
	}
	at := time.UnixMilli(9000).UTC()
	got, err := s.ExpireAll(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	want = []Prompt{want[0], want[2], want[3]}
	for i := range want {
		want[i].Status, want[i].ResolvedAt = PromptExpired, at
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpireAll (-want +got):\n%s", diff)
	}
	for _, w := range want {
		p, _, err := s.Prompt(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w, p); diff != "" {
			t.Errorf("stored %s (-want +got):\n%s", w.ID, diff)
		}
	}
	if p, _, _ := s.Prompt(ctx, "p1"); p.Status != PromptAnswered {
		t.Errorf("answered prompt status = %q after ExpireAll, want answered", p.Status)
	}
	again, err := s.ExpireAll(ctx, at)
	if err != nil || len(again) != 0 {
		t.Errorf("second ExpireAll = %v, %v; want none", again, err)
	}
	if ok, _ := s.ResolvePrompt(ctx, "p0", PromptAnswered, "allow", "U", at); ok {
		t.Error("ResolvePrompt of an expired prompt won")
	}
}

// TestResolvePromptFirstWins races people clicking the same prompt: exactly
// one resolution wins and its answer is the one stored.
func TestResolvePromptFirstWins(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	if err := s.AddPrompt(ctx, testPrompt("p", 1)); err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			by := fmt.Sprintf("U%d", i)
			status := PromptAnswered
			if i%4 == 0 {
				status = PromptCancelled
			}
			ok, err := s.ResolvePrompt(ctx, "p", status, "allow", by, time.UnixMilli(int64(i+1)))
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
				winner.Store(by)
			}
		})
	}
	wg.Wait()
	if got := wins.Load(); got != 1 {
		t.Fatalf("winning resolutions = %d, want 1", got)
	}
	p, _, err := s.Prompt(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if p.ChosenBy != winner.Load() {
		t.Errorf("stored ChosenBy = %q, want the winner %q", p.ChosenBy, winner.Load())
	}
}
