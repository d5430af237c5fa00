package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// TestReadsBesideAWrite holds a write transaction open on the writer and
// reads meanwhile: the reads complete, see the last commit and not the
// write in progress, and see it once it commits. With one connection for
// everything, the read would wait for the transaction, which waits for
// the test: the deadline below ends it.
func TestReadsBesideAWrite(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	th := benchThread(1)
	if err := s.MarkSeen(ctx, th, "m1", time.Now()); err != nil {
		t.Fatal(err)
	}
	inTx := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE seen SET message_id = 'm2' WHERE thread = ?`, th.Thread); err != nil {
				return err
			}
			close(inTx)
			<-release
			return nil
		})
		if err != nil {
			t.Errorf("write: %v", err)
		}
	})
	<-inTx
	// The deadline stands for a caller's (the web chat's last-seen
	// mark); it only ends a read that waits for the transaction.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	id, ok, err := s.LastSeen(rctx, th)
	cancel()
	close(release)
	wg.Wait()
	if err != nil || !ok || id != "m1" {
		t.Fatalf("LastSeen during the write = %q, %v, %v; want m1, true, nil (the last commit, without waiting)", id, ok, err)
	}
	if id, _, err := s.LastSeen(ctx, th); err != nil || id != "m2" {
		t.Errorf("LastSeen after the commit = %q, %v; want m2", id, err)
	}
}

// TestReadersDoNotWrite checks that a reader's connection refuses a
// write: writes all go through the one writer.
func TestReadersDoNotWrite(t *testing.T) {
	s := openTest(t)
	_, err := s.rdb.ExecContext(t.Context(), `DELETE FROM seen`)
	if err == nil {
		t.Fatal("a write on a reader's connection succeeded")
	}
}

// BenchmarkReadBesideWrites reads a binding while other goroutines write
// (turns, seen marks) as busy threads do, and reports the reads' p50 and
// p99: the reads do not queue behind the writes.
func BenchmarkReadBesideWrites(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	for i := range 100 {
		if err := s.PutBinding(ctx, Binding{Thread: benchThread(i), Agent: "demo", SessionID: fmt.Sprint("s", i)}); err != nil {
			b.Fatal(err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			now := time.Now()
			for i := 0; wctx.Err() == nil; i++ {
				th := benchThread((w*50 + i) % 100)
				s.MarkSeen(wctx, th, channels.MessageID(fmt.Sprint("m", i)), now)
				s.AddTurn(wctx, Turn{Thread: th, SessionID: fmt.Sprint("s", w), Seq: i + 1, StopReason: "end_turn",
					Started: now, Ended: now, Used: 1000, UsedKnown: true})
			}
		})
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, ok, err := s.Binding(ctx, benchThread(i%100)); err != nil || !ok {
			b.Fatal(ok, err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	b.StopTimer()
	stop()
	wg.Wait()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
