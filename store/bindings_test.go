package store

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

func TestBindings(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	t1 := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700.1"}
	t2 := channels.ThreadRef{Platform: "discord", Channel: "g/c", Thread: "99"}
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }

	if _, ok, err := s.Binding(ctx, t1); err != nil || ok {
		t.Fatalf("Binding of an unbound thread = _, %v, %v; want false, nil", ok, err)
	}
	b1 := Binding{Thread: t1, Agent: "claude", SessionID: "s1", Cwd: "/repo", Created: ms(1000), Updated: ms(1000)}
	b2 := Binding{Thread: t2, Agent: "codex", SessionID: "s2", Title: "Plan", Created: ms(2000), Updated: ms(2500)}
	for _, b := range []Binding{b1, b2} {
		if err := s.PutBinding(ctx, b); err != nil {
			t.Fatalf("PutBinding(%v): %v", b.Thread, err)
		}
	}
	// An update keeps Created.
	b1u := b1
	b1u.SessionID, b1u.Title, b1u.Created, b1u.Updated = "s3", "Fix the build", ms(5000), ms(6000)
	if err := s.PutBinding(ctx, b1u); err != nil {
		t.Fatal(err)
	}
	want1 := b1u
	want1.Created = b1.Created

	tests := []struct {
		name   string
		thread channels.ThreadRef
		want   Binding
		ok     bool
	}{
		{"updated binding", t1, want1, true},
		{"other binding", t2, b2, true},
		{"unknown thread", channels.ThreadRef{Platform: "web"}, Binding{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := s.Binding(ctx, tc.thread)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok {
				t.Errorf("found = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("binding (-want +got):\n%s", diff)
			}
		})
	}

	all, err := s.Bindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Binding{b2, want1}, all); diff != "" {
		t.Errorf("Bindings (-want +got):\n%s", diff)
	}

	if err := s.DeleteBinding(ctx, t1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBinding(ctx, t1); err != nil {
		t.Errorf("second DeleteBinding: %v, want nil", err)
	}
	if _, ok, _ := s.Binding(ctx, t1); ok {
		t.Error("binding still there after DeleteBinding")
	}
	all, err = s.Bindings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Binding{b2}, all); diff != "" {
		t.Errorf("Bindings after delete (-want +got):\n%s", diff)
	}
}

func TestPutBindingDefaultsTimes(t *testing.T) {
	s := openTest(t)
	th := channels.ThreadRef{Platform: "web", Channel: "local", Thread: "1"}
	before := time.Now().Add(-time.Second)
	if err := s.PutBinding(t.Context(), Binding{Thread: th, Agent: "demo", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Binding(t.Context(), th)
	if err != nil {
		t.Fatal(err)
	}
	if got.Created.Before(before) || !got.Created.Equal(got.Updated) || got.Created.Location() != time.UTC {
		t.Errorf("Created, Updated = %v, %v; want the same recent UTC time", got.Created, got.Updated)
	}
}
