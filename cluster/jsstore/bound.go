package jsstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// BoundOptions configure NewBoundThreads.
type BoundOptions struct {
	// Cluster is cluster.name.
	Cluster string
	// TTL is how long an answer is kept before the bucket is asked
	// again (default 2s): a thread bound through another edge is known
	// here at most TTL after its binding was written.
	TTL time.Duration
	// Log says when the bucket cannot be read.
	Log *slog.Logger
	// Now is the clock of the cache (default time.Now).
	Now func() time.Time
}

// BoundThreads answers, for an edge (which keeps no store), whether a
// thread is bound to a session: a read of the cluster's bindings bucket,
// each answer kept briefly. A thread a worker holds the lease of counts as
// bound too: the worker writes the binding only once the agent's session
// exists, and a message without a mention that reaches this edge
// meanwhile (the mention went to another) is the thread's all the same.
// It never writes, and never creates a bucket: before a worker has, every
// thread is unbound. It is safe for concurrent use.
type BoundThreads struct {
	js jetstream.JetStream
	o  BoundOptions

	mu      sync.Mutex // guards the fields below
	kv      jetstream.KeyValue
	leases  jetstream.KeyValue
	answers map[string]boundAnswer
	failing bool // the last read failed (said once until one succeeds)
}

type boundAnswer struct {
	bound bool
	at    time.Time
}

// maxBoundAnswers bounds the cache; beyond it, it starts afresh.
const maxBoundAnswers = 10000

// NewBoundThreads returns the lookup of the cluster's bindings.
func NewBoundThreads(js jetstream.JetStream, o BoundOptions) *BoundThreads {
	if o.TTL <= 0 {
		o.TTL = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &BoundThreads{js: js, o: o, answers: map[string]boundAnswer{}}
}

// Bound reports whether t has a binding in the cluster's store, or a
// worker's lease (cluster.Leases). A bucket
// that cannot be read answers false (the message is not for the
// gateway, as far as the edge can tell), and the log says so.
func (b *BoundThreads) Bound(ctx context.Context, t channels.ThreadRef) bool {
	key := threadKey(t)
	now := b.o.Now()
	b.mu.Lock()
	a, ok := b.answers[key]
	b.mu.Unlock()
	if ok && now.Sub(a.at) < b.o.TTL {
		return a.bound
	}
	bound, err := b.read(ctx, t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if !b.failing && ctx.Err() == nil {
			b.o.Log.Warn("cannot read the cluster's bindings: a message without a mention in a thread this edge did not see bound is dropped until it can",
				"bucket", b.o.Cluster+"_bindings", "thread", t, "err", err)
		}
		b.failing = true
		return false
	}
	if b.failing {
		b.o.Log.Info("the cluster's bindings can be read again", "bucket", b.o.Cluster+"_bindings")
		b.failing = false
	}
	if len(b.answers) >= maxBoundAnswers {
		clear(b.answers)
	}
	b.answers[key] = boundAnswer{bound: bound, at: now}
	return bound
}

// read looks t up in the bindings, then in the leases.
func (b *BoundThreads) read(ctx context.Context, t channels.ThreadRef) (bool, error) {
	bound, err := b.has(ctx, &b.kv, b.o.Cluster+"_bindings", threadKey(t))
	if bound || err != nil {
		return bound, err
	}
	return b.has(ctx, &b.leases, cluster.LeaseBucket(b.o.Cluster), cluster.LeaseKey(t.String()))
}

// has reports whether bucket holds key, opening the bucket (*kv, guarded
// by mu) first if it is not open yet.
func (b *BoundThreads) has(ctx context.Context, kv *jetstream.KeyValue, bucket, key string) (bool, error) {
	b.mu.Lock()
	h := *kv
	b.mu.Unlock()
	if h == nil {
		var err error
		h, err = b.js.KeyValue(ctx, bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return false, nil // no worker has made it yet: nothing is in it
		}
		if err != nil {
			return false, err
		}
		b.mu.Lock()
		*kv = h
		b.mu.Unlock()
	}
	_, err := h.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}
