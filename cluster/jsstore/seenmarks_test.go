package jsstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/store"
	"github.com/google/go-cmp/cmp"
)

// TestSeenSinceReadsTheWritesSince: the seen threads are read as what the
// seen bucket's stream was written since the window opened: a thread
// seen again is listed once with its last message, a deleted one (its
// mark a deletion in the stream) not at all, an old mark not, and the
// edge's list holds its platform's alone. Before a worker made the
// bucket, nothing was seen.
func TestSeenSinceReadsTheWritesSince(t *testing.T) {
	url := clustertest.StartNode(t).ClientURL()
	js := jsFor(t, url)
	ctx := t.Context()
	if ss, err := jsstore.SeenSince(ctx, js, "c1", "discord", time.Time{}); err != nil || ss != nil {
		t.Fatalf("seen before the bucket exists = %+v %v", ss, err)
	}
	s := open(t, url, "c1")
	now := store.NormTime(time.Now())
	th := func(p, id string) channels.ThreadRef {
		return channels.ThreadRef{Platform: p, Channel: "g/c", Thread: id}
	}
	a, b, d, old, sl := th("discord", "a"), th("discord", "b"), th("discord", "deleted"), th("discord", "old"), th("slack", "a")
	bound := store.Binding{Thread: a, Agent: "demo", SessionID: "s-a", Created: now, Updated: now}
	must(t, s.PutBinding(ctx, bound))
	must(t, s.PutBinding(ctx, store.Binding{Thread: d, Agent: "demo", SessionID: "s-d"}))
	for i, m := range []struct {
		th channels.ThreadRef
		id channels.MessageID
		at time.Time
	}{
		{a, "m1", now}, {b, "m2", now.Add(time.Millisecond)}, {d, "m3", now}, {old, "m4", now.Add(-2 * time.Hour)},
		{sl, "m5", now.Add(2 * time.Millisecond)}, {a, "m6", now.Add(3 * time.Millisecond)},
	} {
		if err := s.MarkSeen(ctx, m.th, m.id, m.at); err != nil {
			t.Fatal(i, err)
		}
	}
	must(t, s.DeleteBinding(ctx, d))
	since := now.Add(-time.Hour)
	want := []store.Seen{
		{Binding: bound, MessageID: "m6", At: now.Add(3 * time.Millisecond)},
		{Binding: store.Binding{Thread: sl}, MessageID: "m5", At: now.Add(2 * time.Millisecond)},
		{Binding: store.Binding{Thread: b}, MessageID: "m2", At: now.Add(time.Millisecond)},
	}
	got, err := s.SeenSince(ctx, since)
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Store.SeenSince (-want +got):\n%s", diff)
	}
	got, err = jsstore.SeenSince(ctx, js, "c1", "discord", since)
	must(t, err)
	if diff := cmp.Diff([]store.Seen{want[0], want[2]}, got); diff != "" {
		t.Errorf("jsstore.SeenSince of discord (-want +got):\n%s", diff)
	}
}

// BenchmarkSeenSince10k lists, as an edge's catch-up on a new Discord
// session does, the threads seen in the window, of 10,000 bound: "100"
// when 100 were seen in it (the others before it opened), "all" when
// every one was. The clock skew allowed is none, so that the 10,000
// written just before count as written long ago.
func BenchmarkSeenSince10k(b *testing.B) {
	url := clustertest.StartNode(b).ClientURL()
	js := jsFor(b, url)
	s := open(b, url, "bench")
	ctx := b.Context()
	jsstore.SetSeenSkew(b, 0)
	th := func(i int) channels.ThreadRef {
		return channels.ThreadRef{Platform: "discord", Channel: "g1/c1", Thread: fmt.Sprint(i)}
	}
	start := time.Now()
	for i := range scaleThreads {
		if err := s.PutBinding(ctx, store.Binding{Thread: th(i), Agent: "demo", SessionID: fmt.Sprint("s", i)}); err != nil {
			b.Fatal(err)
		}
		if err := s.MarkSeen(ctx, th(i), "m1", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	since := time.Now()
	for i := range 100 {
		if err := s.MarkSeen(ctx, th(i*7), "m2", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		since time.Time
		n     int
	}{{"100", since, 100}, {"all", start, scaleThreads}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ss, err := jsstore.SeenSince(ctx, js, "bench", "discord", c.since)
				if err != nil || len(ss) < c.n || ss[len(ss)-1].SessionID == "" {
					b.Fatal(len(ss), err)
				}
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
