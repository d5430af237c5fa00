package jsstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

func (s *Store) turnSubject(t channels.ThreadRef, sessionID string) string {
	return s.cluster + ".turns." + token(t.Platform) + "." + token(t.Channel) + "." + token(sessionID)
}

// AddTurn records a turn; a zero Seq is the session's next, a Seq already
// there replaces that turn.
func (s *Store) AddTurn(ctx context.Context, t store.Turn) error {
	t.Started, t.Ended = store.NormTime(t.Started), store.NormTime(t.Ended)
	if t.Seq == 0 {
		ts, err := s.Turns(ctx, t.SessionID)
		if err != nil {
			return fmt.Errorf("add turn of session %q: %w", t.SessionID, err)
		}
		t.Seq = 1
		if len(ts) > 0 {
			t.Seq = ts[len(ts)-1].Seq + 1
		}
	}
	b, err := turnCodec.enc(t)
	if err == nil {
		_, err = s.js.Publish(ctx, s.turnSubject(t.Thread, t.SessionID), b)
	}
	if err != nil {
		return fmt.Errorf("add turn of session %q: %w", t.SessionID, err)
	}
	return nil
}

// turnsOn reads the turns on subjects matching filter, the last record of
// each (session, seq), by session and seq.
func (s *Store) turnsOn(ctx context.Context, filter string) ([]store.Turn, error) {
	type key struct {
		session string
		seq     int
	}
	last := map[key]store.Turn{}
	err := readStream(ctx, s.turns, filter, func(_ string, data []byte) error {
		t, err := turnCodec.dec(data)
		if err != nil {
			return err
		}
		last[key{t.SessionID, t.Seq}] = t
		return nil
	})
	if err != nil {
		return nil, err
	}
	ts := slices.Collect(maps.Values(last))
	slices.SortFunc(ts, func(a, b store.Turn) int {
		return cmp.Or(cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.Seq, b.Seq))
	})
	return ts, nil
}

// Turns lists a session's turns by seq.
func (s *Store) Turns(ctx context.Context, sessionID string) ([]store.Turn, error) {
	ts, err := s.turnsOn(ctx, s.cluster+".turns.*.*."+token(sessionID))
	if err != nil {
		return nil, fmt.Errorf("list turns of session %q: %w", sessionID, err)
	}
	return ts, nil
}

// UsageTotals counts a session's turns and sums its turns' costs by
// currency.
func (s *Store) UsageTotals(ctx context.Context, sessionID string) (store.Usage, error) {
	ts, err := s.Turns(ctx, sessionID)
	if err != nil {
		return store.Usage{}, fmt.Errorf("usage of session %q: %w", sessionID, err)
	}
	var u store.Usage
	for _, t := range ts {
		u.Turns++
		if t.CostKnown {
			if u.Cost == nil {
				u.Cost = map[string]float64{}
			}
			// Agents report the session's cost so far: the highest a
			// turn recorded is the session's (as the SQLite store takes).
			u.Cost[t.Currency] = max(u.Cost[t.Currency], t.Cost)
		}
	}
	return u, nil
}

// ThreadSpend sums every turn of a thread.
func (s *Store) ThreadSpend(ctx context.Context, th channels.ThreadRef) (store.Spend, error) {
	ts, err := s.turnsOn(ctx, s.cluster+".turns."+token(th.Platform)+"."+token(th.Channel)+".*")
	if err != nil {
		return store.Spend{}, fmt.Errorf("sum the spend: %w", err)
	}
	return spend(ts, func(t store.Turn) bool { return t.Thread == th }).Spend(), nil
}

// SessionCost is the most a session's turns reported it cost.
func (s *Store) SessionCost(ctx context.Context, id string) (float64, bool, error) {
	ts, err := s.Turns(ctx, id)
	if err != nil {
		return 0, false, fmt.Errorf("cost of session %q: %w", id, err)
	}
	c, ok := 0.0, false
	for _, t := range ts {
		if t.CostKnown && (!ok || t.Cost > c) {
			c, ok = t.Cost, true
		}
	}
	return c, ok, nil
}

func (s *Store) entrySubject(sessionID string) string {
	return s.cluster + ".entries." + token(sessionID)
}

// SaveEntries adds or replaces entries of a session's transcript, all or
// none: they are written as one record (savedWire), in parts if it is
// larger than a message may be, and a record whose parts are not all
// there is never read. A worker that dies in the middle of a save leaves
// nothing of it.
func (s *Store) SaveEntries(ctx context.Context, sessionID string, es []store.Entry) error {
	if len(es) == 0 {
		return nil
	}
	for _, e := range es {
		if e.Seq < 0 {
			return fmt.Errorf("save transcript of session %q: entry %d: negative seq", sessionID, e.Seq)
		}
	}
	b, err := marshalSaved(es)
	if err != nil {
		return fmt.Errorf("save transcript of session %q: %w", sessionID, err)
	}
	acks := make([]jetstream.PubAckFuture, 0, 1)
	for i, m := range parts(s.js, s.entrySubject(sessionID), b) {
		if i > 0 && s.partHook != nil {
			if err = s.partHook(i); err != nil {
				break
			}
		}
		var f jetstream.PubAckFuture
		if f, err = publishAsync(s.js, m); err != nil {
			break
		}
		acks = append(acks, f)
	}
	if err != nil {
		return fmt.Errorf("save transcript of session %q: %w", sessionID, err)
	}
	for _, f := range acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("save transcript of session %q: %w", sessionID, err)
		case <-ctx.Done():
			return fmt.Errorf("save transcript of session %q: %w", sessionID, ctx.Err())
		}
	}
	return nil
}

// Entries reads a session's transcript by seq, the last version of each
// entry.
func (s *Store) Entries(ctx context.Context, sessionID string) ([]store.Entry, error) {
	last := map[int]store.Entry{}
	err := readStream(ctx, s.entries, s.entrySubject(sessionID), func(_ string, data []byte) error {
		es, err := unmarshalSaved(data)
		if err != nil {
			return err
		}
		for _, e := range es {
			last[e.Seq] = e
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read transcript of session %q: %w", sessionID, err)
	}
	es := slices.Collect(maps.Values(last))
	slices.SortFunc(es, func(a, b store.Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	return es, nil
}

// LoadTranscript reads a session's transcript to go on with it.
func (s *Store) LoadTranscript(ctx context.Context, sessionID string) (*store.Transcript, error) {
	es, err := s.Entries(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	t, err := store.RestoreTranscript(es)
	if err != nil {
		return nil, fmt.Errorf("load transcript of session %q: %w", sessionID, err)
	}
	return t, nil
}
