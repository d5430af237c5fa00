package jsstore

// What a channel spent since the start of a UTC day, the budget check
// before every prompt (session.dayStart), kept in the bucket
// <cluster>_spend, a key per channel and day: the sums over the turns
// ended since the day began, and the last message of the channel's turn
// records they count (seq). A read folds in the records written since
// then, and writes the sums back by compare-and-set: they are what the
// turn stream says up to that record, whoever wrote it (a worker of the
// code before) and whenever a worker died, so a value is never wrong,
// only behind (and compare-and-set keeps it from going back). A key that
// is not there yet (an existing deployment, a new day) is made from the
// channel's whole stream, once.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// spendSum is a sum of turns' spend.
type spendSum struct {
	Turns     int
	CostTurns int // of which had a known cost
	Cost      float64
}

func (s spendSum) Spend() store.Spend {
	return store.Spend{Turns: s.Turns, Cost: s.Cost, CostKnown: s.CostTurns > 0}
}

func (s spendSum) minus(o spendSum) spendSum {
	return spendSum{Turns: s.Turns - o.Turns, CostTurns: s.CostTurns - o.CostTurns, Cost: s.Cost - o.Cost}
}

func (s spendSum) plus(o spendSum) spendSum {
	return spendSum{Turns: s.Turns + o.Turns, CostTurns: s.CostTurns + o.CostTurns, Cost: s.Cost + o.Cost}
}

// spend sums, over ts (by session and seq), the turns that keep: a turn
// costs its reported session cost less the most the session reported
// before it, and never less than nothing.
func spend(ts []store.Turn, keep func(store.Turn) bool) spendSum {
	var sp spendSum
	session, most := "", 0.0
	for _, t := range ts {
		if t.SessionID != session {
			session, most = t.SessionID, 0
		}
		if keep(t) {
			sp.Turns++
			if t.CostKnown {
				sp.Cost += max(t.Cost-most, 0)
				sp.CostTurns++
			}
		}
		if t.CostKnown {
			most = max(most, t.Cost)
		}
	}
	return sp
}

// seqTurn is a turn record with its stream sequence.
type seqTurn struct {
	seq uint64
	t   store.Turn
}

// spendUpTo sums, as spend, the last record of each (session, seq) of rs
// written up to stream sequence upTo, of the turns ended since since.
func spendUpTo(rs []seqTurn, upTo uint64, since time.Time) spendSum {
	type key struct {
		session string
		seq     int
	}
	last := map[key]store.Turn{}
	for _, r := range rs {
		if r.seq <= upTo {
			last[key{r.t.SessionID, r.t.Seq}] = r.t
		}
	}
	ts := slices.Collect(maps.Values(last))
	slices.SortFunc(ts, func(a, b store.Turn) int {
		return cmp.Or(cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.Seq, b.Seq))
	})
	return spend(ts, func(t store.Turn) bool { return !t.Ended.Before(since) })
}

// turnRecords reads the turn records on filter after stream sequence
// after, in stream order; more is false when they are more than most
// (and none is returned).
func (s *Store) turnRecords(ctx context.Context, filter string, after uint64, most int) (rs []seqTurn, more bool, err error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	c, done, err := ordered(ctx, s.turns.OrderedConsumer, s.turns.DeleteConsumer, cfg)
	if err != nil {
		return nil, false, err
	}
	defer done()
	if most > 0 && c.CachedInfo().NumPending > uint64(most) {
		return nil, true, nil
	}
	err = readConsumer(c, func(_ jetstream.Msg, seq uint64, data []byte) error {
		t, err := turnCodec.dec(data)
		if err != nil {
			return err
		}
		rs = append(rs, seqTurn{seq, t})
		return nil
	})
	return rs, false, err
}

// foldMost is how many new records a read folds in, one session's records
// read per session among them; past it the sums are made again from the
// whole stream.
const foldMost = 256

// ChannelSpend sums the turns of a channel that ended since since: from
// the channel's sums of the day when since starts a UTC day, else from
// the channel's turn records.
func (s *Store) ChannelSpend(ctx context.Context, platform, channel string, since time.Time) (store.Spend, error) {
	since = store.NormTime(since)
	filter := s.cluster + ".turns." + token(platform) + "." + token(channel) + ".*"
	if since.IsZero() || !since.Equal(since.Truncate(24*time.Hour)) {
		rs, _, err := s.turnRecords(ctx, filter, 0, 0)
		if err != nil {
			return store.Spend{}, fmt.Errorf("sum the spend: %w", err)
		}
		return spendUpTo(rs, ^uint64(0), since).Spend(), nil
	}
	key := token(platform) + "." + token(channel) + "." + since.Format("20060102")
	for range casTries {
		sp, done, err := s.foldSpend(ctx, key, filter, since)
		if err != nil {
			return store.Spend{}, fmt.Errorf("sum the spend: %w", err)
		}
		if done {
			return sp.Spend(), nil
		}
	}
	return store.Spend{}, fmt.Errorf("sum the spend: key %s: still changing after %d tries", key, casTries)
}

// foldSpend reads the sums of key, folds in the records of filter
// written since and writes them back; done is false when another worker
// wrote the key in between.
func (s *Store) foldSpend(ctx context.Context, key, filter string, since time.Time) (sum spendSum, done bool, err error) {
	idx, rev, ok, err := get(ctx, s.spend, key, spendCodec)
	if err != nil {
		return spendSum{}, false, err
	}
	last, err := s.turns.GetLastMsgForSubject(ctx, filter)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return spendSum{}, true, nil // no turn in the channel
	case err != nil:
		return spendSum{}, false, err
	case ok && last.Sequence == idx.Seq:
		return idx.Sum, true, nil // none since the sums
	}
	rs, more, err := s.turnRecords(ctx, filter, idx.Seq, foldMost)
	if err != nil {
		return spendSum{}, false, err
	}
	switch {
	case more || !ok:
		// Made again from the whole stream.
		if rs, _, err = s.turnRecords(ctx, filter, 0, 0); err != nil {
			return spendSum{}, false, err
		}
		idx = spendIndex{}
		if len(rs) > 0 {
			idx.Seq = rs[len(rs)-1].seq
		}
		idx.Sum = spendUpTo(rs, idx.Seq, since)
	case len(rs) == 0:
		return idx.Sum, true, nil
	default:
		// Each session written since: what its records up to the last
		// sum count, and what they count now.
		upTo := rs[len(rs)-1].seq
		sessions := map[string]string{} // session id: its subject
		for _, r := range rs {
			sessions[r.t.SessionID] = s.turnSubject(r.t.Thread, r.t.SessionID)
		}
		for _, subject := range sessions {
			srs, _, err := s.turnRecords(ctx, subject, 0, 0)
			if err != nil {
				return spendSum{}, false, err
			}
			idx.Sum = idx.Sum.plus(spendUpTo(srs, upTo, since).minus(spendUpTo(srs, idx.Seq, since)))
		}
		idx.Seq = upTo
	}
	b, err := spendCodec.enc(idx)
	if err != nil {
		return spendSum{}, false, err
	}
	if ok {
		_, err = s.spend.Update(ctx, key, b, rev)
	} else {
		_, err = s.spend.Create(ctx, key, b)
	}
	if conflict(err) {
		return spendSum{}, false, nil
	}
	return idx.Sum, err == nil, err
}

// spendIndex is the value of a channel's day in the spend bucket.
type spendIndex struct {
	Seq uint64 // the last message of the channel's turn records counted
	Sum spendSum
}

type spendWire struct {
	V         int     `json:"v"`
	Seq       uint64  `json:"seq"`
	Turns     int     `json:"turns"`
	CostTurns int     `json:"costTurns"`
	Cost      float64 `json:"cost"`
}

// spendCodec has no version 0: the bucket came after records had
// versions.
var spendCodec = codec[spendIndex]{
	enc: func(x spendIndex) ([]byte, error) {
		return store.MarshalWire(spendWire{V: wireV, Seq: x.Seq, Turns: x.Sum.Turns, CostTurns: x.Sum.CostTurns, Cost: x.Sum.Cost})
	},
	dec: func(b []byte) (spendIndex, error) {
		v, err := store.RecordVersion(b)
		if err == nil && v == 0 {
			err = errors.New("a spend record without a version")
		}
		var w spendWire
		if err == nil {
			err = json.Unmarshal(b, &w)
		}
		if err != nil {
			return spendIndex{}, err
		}
		return spendIndex{Seq: w.Seq, Sum: spendSum{Turns: w.Turns, CostTurns: w.CostTurns, Cost: w.Cost}}, nil
	},
}
