package jsstore_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/store"
)

// TestChannelSpendIndex: the sums of a channel's day (the spend bucket)
// answer what the SQLite store, which sums the turns each time, does,
// through turns added, turns written again with another cost or end
// (into the day and out of it), sessions whose earlier turns ended the
// day before, more turns at once than a read folds in, and a deployment
// whose spend bucket is not there (made again from the turn stream).
// AddTurn writes the stream alone, as the code before did: what such a
// worker writes is counted too.
func TestChannelSpendIndex(t *testing.T) {
	ctx := t.Context()
	url := clustertest.StartNode(t).ClientURL()
	js := open(t, url, "c1")
	sq, err := store.OpenWith(ctx, filepath.Join(t.TempDir(), "gateway.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	seqs := map[string]int{}
	add := func(n int) {
		t.Helper()
		for range n {
			th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: fmt.Sprint("t", r.IntN(12))}
			if r.IntN(6) == 0 {
				th.Channel = "other"
			}
			session := th.Channel + "/" + th.Thread
			seq := seqs[session] + 1
			if seqs[session] > 0 && r.IntN(4) == 0 {
				seq = 1 + r.IntN(seqs[session]) // written again
			}
			seqs[session] = max(seqs[session], seq)
			ended := day.Add(time.Duration(r.IntN(50)-2) * time.Hour)
			tu := store.Turn{Thread: th, SessionID: session, Seq: seq, StopReason: "end_turn", Started: ended, Ended: ended,
				Cost: float64(r.IntN(1000)-50) / 100, Currency: "USD", CostKnown: r.IntN(5) > 0}
			for _, s := range []store.Backend{js, sq} {
				if err := s.AddTurn(ctx, tu); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	check := func(step string, s *jsstore.Store) {
		t.Helper()
		for _, since := range []time.Time{day, day.Add(24 * time.Hour), day.Add(7 * time.Hour), {}} {
			want, err := sq.ChannelSpend(ctx, "web", "c", since)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ChannelSpend(ctx, "web", "c", since)
			if err != nil {
				t.Fatal(err)
			}
			if got.Turns != want.Turns || got.CostKnown != want.CostKnown || math.Abs(got.Cost-want.Cost) > 1e-6 {
				t.Fatalf("%s: spend since %v = %+v, want %+v", step, since, got, want)
			}
		}
	}
	check("no turns", js)
	for i := range 60 {
		add(1 + r.IntN(8))
		check(fmt.Sprint("step ", i), js)
	}
	add(400)
	check("more turns than a read folds in", js)
	add(5)
	if err := jsFor(t, url).DeleteKeyValue(ctx, "c1_spend"); err != nil {
		t.Fatal(err)
	}
	check("a deployment without the spend bucket", open(t, url, "c1"))
}

// TestChannelSpendIndexAcrossWorkers: workers that add turns to one
// channel and sum its spend at once each see their own turns counted,
// and afterwards all agree on every turn recorded.
func TestChannelSpendIndexAcrossWorkers(t *testing.T) {
	ctx := t.Context()
	url := clustertest.StartNode(t).ClientURL()
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	workers := []*jsstore.Store{open(t, url, "c1"), open(t, url, "c1"), open(t, url, "c1")}
	var wg sync.WaitGroup
	errs := make(chan error, len(workers))
	for w, s := range workers {
		wg.Go(func() {
			for i := range 20 {
				th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: fmt.Sprint(w)}
				err := s.AddTurn(ctx, store.Turn{Thread: th, SessionID: fmt.Sprint("s", w), Seq: i + 1, StopReason: "end_turn",
					Started: day.Add(time.Hour), Ended: day.Add(time.Hour), Cost: float64(i+1) / 4, Currency: "USD", CostKnown: true})
				if err == nil {
					var sp store.Spend
					sp, err = s.ChannelSpend(ctx, "web", "c", day)
					if err == nil && sp.Turns < i+1 {
						err = fmt.Errorf("worker %d after its turn %d: spend of %d turns", w, i+1, sp.Turns)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w, s := range workers {
		sp, err := s.ChannelSpend(ctx, "web", "c", day)
		if err != nil || sp.Turns != 60 || math.Abs(sp.Cost-15) > 1e-9 {
			t.Errorf("worker %d: spend = %+v %v, want 60 turns $15", w, sp, err)
		}
	}
}
