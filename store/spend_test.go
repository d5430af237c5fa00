package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// TestSpendReadsTheChannelsTurnsSince: the spend of a channel since a time
// reads that channel's turns since then by an index (turns_channel), and
// each one's earlier turns by the primary key, never the whole table.
func TestSpendReadsTheChannelsTurnsSince(t *testing.T) {
	s := openTest(t)
	rows, err := s.db.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+spendSQL, "web", "c", int64(0))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "USING INDEX turns_channel") || strings.Contains(text, "SCAN t") {
		t.Errorf("the spend query's plan is\n%s\nwant the channel's turns read by turns_channel, no scan of the table", text)
	}
}

// BenchmarkChannelSpend10k sums a channel's spend of the day, as the
// budget check before every prompt does, where 10,000 threads of the
// channel had a turn on the days before, another channel's 10,000 too,
// and 100 had one today.
func BenchmarkChannelSpend10k(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	turn := func(channel string, i, seq int, ended time.Time) Turn {
		return Turn{Thread: channels.ThreadRef{Platform: "slack", Channel: channel, Thread: fmt.Sprint(i)}, SessionID: fmt.Sprint(channel, "/s", i),
			Seq: seq, StopReason: "end_turn", Started: ended, Ended: ended, Cost: float64(seq) / 100, Currency: "USD", CostKnown: true}
	}
	for i := range 10_000 {
		for _, c := range []string{"T1/C1", "T1/C2"} {
			if err := s.AddTurn(ctx, turn(c, i, 1, day.Add(-time.Duration(1+i%500)*time.Hour))); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 100 {
		if err := s.AddTurn(ctx, turn("T1/C1", i*7, 2, day.Add(time.Hour))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		sp, err := s.ChannelSpend(ctx, "slack", "T1/C1", day)
		if err != nil || sp.Turns != 100 {
			b.Fatal(sp, err)
		}
	}
}
