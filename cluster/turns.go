package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Turns hands out turns by key across every process of the cluster: a key
// taken cannot be taken again, by any process, until Every has passed
// since it was taken or last renewed. It is a key-value bucket whose
// values live Every (the bucket's TTL, kept by the server): Take creates
// the key, which fails while it exists; Renew writes it again, so it lives
// Every from then. The edges space the Discord identifies of a bot's
// shards with it (discord.Options.IdentifyGate, the bucket
// `<cluster>_identify`).
type Turns struct {
	kv    jetstream.KeyValue
	every time.Duration
}

// TurnsOptions configures OpenTurns.
type TurnsOptions struct {
	// Bucket is the key-value bucket's name (e.g. "<cluster>_identify").
	Bucket string
	// Every is how long a turn lasts: the time between two turns of a key.
	Every time.Duration
	// Replicas is the bucket's copies (cluster.replicas; 0 means 1).
	Replicas int
}

// minTurnPoll bounds how often Take asks again for a key that is taken.
const minTurnPoll = 50 * time.Millisecond

// OpenTurns opens the bucket, making it if missing.
func OpenTurns(ctx context.Context, js jetstream.JetStream, o TurnsOptions) (*Turns, error) {
	if o.Bucket == "" || o.Every < time.Second {
		return nil, fmt.Errorf("cluster: turns need a bucket and a turn of at least 1s (got %q, %v)", o.Bucket, o.Every)
	}
	kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:      o.Bucket,
		Description: "turns: a key lives one turn after it is taken or renewed",
		History:     1,
		TTL:         o.Every,
		Replicas:    max(o.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: turns bucket %s: %w", o.Bucket, err)
	}
	return &Turns{kv: kv, every: o.Every}, nil
}

// Take waits until key is free and takes it: no other Take of key, in any
// process, returns before Every has passed. It returns ctx's error when
// ctx ends first, or the bucket's when it cannot be reached.
func (t *Turns) Take(ctx context.Context, key string) error {
	for {
		_, err := t.kv.Create(ctx, key, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("cluster: taking turn %q: %w", key, err)
		}
		// Taken: wait until it expires, by the server's timestamp of the
		// value (a skewed clock only makes the wait shorter or longer;
		// the create decides).
		wait := t.every
		e, err := t.kv.Get(ctx, key)
		switch {
		case err == nil:
			wait = time.Until(e.Created().Add(t.every))
		case errors.Is(err, jetstream.ErrKeyNotFound):
			wait = 0
		default:
			return fmt.Errorf("cluster: reading turn %q: %w", key, err)
		}
		timer := time.NewTimer(min(max(wait, minTurnPoll), t.every))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// Renew makes key's turn last Every from now (whoever holds it).
func (t *Turns) Renew(ctx context.Context, key string) error {
	if _, err := t.kv.Put(ctx, key, []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
		return fmt.Errorf("cluster: renewing turn %q: %w", key, err)
	}
	return nil
}
