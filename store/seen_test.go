package store

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

func TestSeenSince(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	old := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700.1"}
	recent := channels.ThreadRef{Platform: "discord", Channel: "c", Thread: "99"}
	newest := channels.ThreadRef{Platform: "discord", Channel: "c", Thread: "98"}
	unbound := channels.ThreadRef{Platform: "discord", Channel: "c", Thread: "97"}
	for _, th := range []channels.ThreadRef{old, recent, newest} {
		if err := s.PutBinding(ctx, Binding{Thread: th, Agent: "demo", SessionID: "s-" + th.Thread}); err != nil {
			t.Fatal(err)
		}
	}
	marks := []struct {
		th channels.ThreadRef
		id channels.MessageID
		at int64
	}{
		{old, "1700.2", 1000},
		{recent, "100", 4000},
		{recent, "101", 5000}, // replaces the mark before
		{newest, "200", 6000},
		{unbound, "300", 7000},
	}
	for _, m := range marks {
		if err := s.MarkSeen(ctx, m.th, m.id, ms(m.at)); err != nil {
			t.Fatalf("MarkSeen(%v): %v", m.th, err)
		}
	}
	got, err := s.SeenSince(ctx, ms(2000))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		th channels.ThreadRef
		id channels.MessageID
		at time.Time
		sn string
	}
	var rows []row
	for _, g := range got {
		rows = append(rows, row{g.Thread, g.MessageID, g.At, g.SessionID})
	}
	// The thread not bound is there, with no session.
	want := []row{{unbound, "300", ms(7000), ""}, {newest, "200", ms(6000), "s-98"}, {recent, "101", ms(5000), "s-99"}}
	if len(rows) != len(want) {
		t.Fatalf("SeenSince = %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("SeenSince[%d] = %+v, want %+v", i, rows[i], want[i])
		}
	}
}
