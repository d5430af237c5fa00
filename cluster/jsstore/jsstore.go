// Package jsstore is the gateway's durable state on NATS JetStream, for a
// cluster of workers: a [store.Backend] whose data every worker shares.
//
// Key-value buckets (each "<cluster>_<what>", one value per key, history 1)
// hold what is looked up by key: bindings, prompts, choices, budget holds,
// running turns and seen messages, keyed by thread (or by prompt id), and
// what each channel spent since a day began (spend.go).
// Streams hold what grows: turn records ("<cluster>_turns", subject
// <cluster>.turns.<platform>.<channel>.<session>) and transcript entries
// ("<cluster>_entries", subject <cluster>.entries.<session>, a record per
// SaveEntries holding all it saved). A record written again (a turn or an
// entry with the same seq) is a new message; the last one wins when read.
//
// Every value is JSON of a wire type of its own (wire.go), versioned with
// "v", never a store type as Go would marshal it; values written before
// records had versions are read still (wire_v0.go).
//
// Writes that must happen once, whichever worker tries (a prompt resolved,
// an option chosen), are compare-and-set on the key's revision, retried on
// a conflict: ResolvePrompt reports true to exactly one caller in the
// cluster.
package jsstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure Open.
type Options struct {
	// Cluster is cluster.name: it starts every bucket, stream and subject.
	Cluster string
	// Replicas is how many copies JetStream keeps (1 for one node, 3 for
	// a cluster).
	Replicas int
}

// Store is the JetStream store. It is safe for concurrent use, and
// several Stores (one per worker) share the same data.
type Store struct {
	js       jetstream.JetStream
	cluster  string
	bindings jetstream.KeyValue
	prompts  jetstream.KeyValue
	choices  jetstream.KeyValue
	holds    jetstream.KeyValue
	running  jetstream.KeyValue
	seen     jetstream.KeyValue
	open     jetstream.KeyValue // handles.go
	sessions jetstream.KeyValue // sessions.go
	spend    jetstream.KeyValue // spend.go
	turns    jetstream.Stream
	entries  jetstream.Stream

	// partHook, for tests, runs before each part of a saved record but
	// the first; an error stops the save there, as a crash would.
	partHook func(i int) error
}

var _ store.Backend = (*Store)(nil)

// Open creates the buckets and streams, or opens them.
func Open(ctx context.Context, js jetstream.JetStream, o Options) (*Store, error) {
	if o.Cluster == "" {
		return nil, errors.New("jsstore: the cluster needs a name")
	}
	s := &Store{js: js, cluster: o.Cluster}
	r := max(o.Replicas, 1)
	for _, b := range []struct {
		kv   *jetstream.KeyValue
		name string
		desc string
	}{
		{&s.bindings, "bindings", "which thread is bound to which agent session"},
		{&s.prompts, "prompts", "permission prompts and how they were settled"},
		{&s.choices, "choices", "options chosen in a thread, applied to its next session"},
		{&s.holds, "budget_holds", "threads holding their next turn after a budget was reached"},
		{&s.running, "running", "turns running, to tell the threads a dead worker cut off"},
		{&s.seen, "seen", "the last message read in each thread"},
		{&s.open, "open", "messages of running turns still showing a tool running, with their cut-off text"},
		{&s.sessions, "sessions", "sessions attached to a thread (/attach), and those of deleted threads"},
		{&s.spend, "spend", "what each channel spent since a day began, and the last turn record counted"},
	} {
		kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
			Bucket: o.Cluster + "_" + b.name, Description: b.desc, History: 1,
			Storage: jetstream.FileStorage, Replicas: r,
		})
		if err != nil {
			return nil, fmt.Errorf("jsstore: bucket %s_%s: %w", o.Cluster, b.name, err)
		}
		*b.kv = kv
	}
	for _, st := range []struct {
		s    *jetstream.Stream
		name string
		desc string
	}{
		{&s.turns, "turns", "turn records: usage and cost"},
		{&s.entries, "entries", "session transcripts"},
	} {
		cfg := jetstream.StreamConfig{
			Name: o.Cluster + "_" + st.name, Description: st.desc,
			Subjects: []string{o.Cluster + "." + st.name + ".>"},
			Storage:  jetstream.FileStorage, Replicas: r,
		}
		x, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.Stream, error) {
			if x, err := js.Stream(ctx, cfg.Name); err == nil {
				return x, nil
			}
			return js.CreateOrUpdateStream(ctx, cfg)
		})
		if err != nil {
			return nil, fmt.Errorf("jsstore: stream %s: %w", cfg.Name, err)
		}
		*st.s = x
	}
	return s, nil
}

// openBucket opens a bucket as it is, else creates it: updating a
// bucket's config on every start races with watches of running workers.
func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		if kv, err := js.KeyValue(ctx, cfg.Bucket); err == nil {
			return kv, nil
		}
		return js.CreateOrUpdateKeyValue(ctx, cfg)
	})
}

// token is s as one subject token or key part: never empty, never a
// wildcard or a dot.
func token(s string) string { return "_" + base64.RawURLEncoding.EncodeToString([]byte(s)) }

// threadKey keeps the three ids apart (a channel id may hold a "/").
func threadKey(t channels.ThreadRef) string {
	return token(t.Platform) + "." + token(t.Channel) + "." + token(t.Thread)
}

// get reads key's value, decoded by c; ok is false when there is none.
func get[T any](ctx context.Context, kv jetstream.KeyValue, key string, c codec[T]) (v T, rev uint64, ok bool, err error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return v, 0, false, nil
	}
	if err != nil {
		return v, 0, false, err
	}
	if v, err = c.dec(e.Value()); err != nil {
		return v, 0, false, fmt.Errorf("key %s: %w", key, err)
	}
	return v, e.Revision(), true, nil
}

// put writes v, encoded by c, as key's value.
func put[T any](ctx context.Context, kv jetstream.KeyValue, key string, c codec[T], v T) error {
	b, err := c.enc(v)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, key, b)
	return err
}

// del deletes key; a key already gone is fine.
func del(ctx context.Context, kv jetstream.KeyValue, key string, opts ...jetstream.KVDeleteOpt) error {
	err := kv.Delete(ctx, key, opts...)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	return err
}

// allOf calls f with each value of the bucket, decoded by c: of the keys
// matching one of keys (subject wildcards) if any are given, else all.
func allOf[T any](ctx context.Context, kv jetstream.KeyValue, c codec[T], f func(key string, v T) error, keys ...string) error {
	return all(ctx, kv, func(key string, _ uint64, data []byte) error {
		v, err := c.dec(data)
		if err != nil {
			return fmt.Errorf("key %s: %w", key, err)
		}
		return f(key, v)
	}, keys...)
}

// all calls f with each value of the bucket, of the keys matching one of
// keys if any are given: the server sends only those.
func all(ctx context.Context, kv jetstream.KeyValue, f func(key string, rev uint64, data []byte) error, keys ...string) error {
	if len(keys) == 0 {
		keys = []string{">"}
	}
	w, err := kv.WatchFiltered(ctx, keys, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("the watch ended early")
			}
			if e == nil { // every value there has been given
				return nil
			}
			if err := f(e.Key(), e.Revision(), e.Value()); err != nil {
				return err
			}
		}
	}
}

// conflict reports whether err is a compare-and-set that lost.
func conflict(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence)
}

// casTries bounds a compare-and-set loop; each conflict means another
// writer won a round, so running out takes that many competing writes.
const casTries = 100

// update reads key, lets change decide (write false: leave it), and
// writes the result if nobody wrote in between, else tries again.
func update[T any](ctx context.Context, kv jetstream.KeyValue, key string, c codec[T], change func(v *T, ok bool) (write bool, err error)) error {
	for range casTries {
		v, rev, ok, err := get(ctx, kv, key, c)
		if err != nil {
			return err
		}
		write, err := change(&v, ok)
		if err != nil || !write {
			return err
		}
		b, err := c.enc(v)
		if err != nil {
			return err
		}
		if ok {
			_, err = kv.Update(ctx, key, b, rev)
		} else {
			_, err = kv.Create(ctx, key, b)
		}
		if !conflict(err) {
			return err
		}
	}
	return fmt.Errorf("key %s: still changing after %d tries", key, casTries)
}

// readStream calls f with each record of st on subjects matching filter,
// in stream order (a record published in parts whole).
func readStream(ctx context.Context, st jetstream.Stream, filter string, f func(subject string, data []byte) error) error {
	c, done, err := ordered(ctx, st.OrderedConsumer, st.DeleteConsumer, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return err
	}
	defer done()
	return readConsumer(c, func(m jetstream.Msg, _ uint64, data []byte) error { return f(m.Subject(), data) })
}

// ordered makes an ordered consumer with cfg (newConsumer); done deletes
// it (del), so that a read leaves no consumer on the server for its
// inactive threshold, each counting against the stream's limit.
func ordered(ctx context.Context, newConsumer func(context.Context, jetstream.OrderedConsumerConfig) (jetstream.Consumer, error),
	del func(ctx context.Context, name string) error, cfg jetstream.OrderedConsumerConfig) (c jetstream.Consumer, done func(), err error) {
	cfg.InactiveThreshold = 30 * time.Second
	if c, err = newConsumer(ctx, cfg); err != nil {
		return nil, nil, err
	}
	return c, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// Best effort: one left goes at its inactive threshold.
		_ = del(ctx, c.CachedInfo().Name)
	}, nil
}

// readConsumer calls f with each record the ordered consumer c has to
// give now, with its stream sequence (its last part's), in stream order.
func readConsumer(c jetstream.Consumer, f func(m jetstream.Msg, seq uint64, data []byte) error) error {
	var parts joiner
	pending := c.CachedInfo().NumPending
	for pending > 0 {
		batch, err := c.Fetch(int(min(pending, 256)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			pending = md.NumPending
			data, whole, err := parts.add(m)
			if err != nil {
				return fmt.Errorf("%s: message %d: %w", m.Subject(), md.Sequence.Stream, err)
			}
			if !whole {
				continue
			}
			if err := f(m, md.Sequence.Stream, data); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the stream gave fewer messages than it holds")
		}
	}
	return nil
}
