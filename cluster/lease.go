package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Errors of the lease operations.
var (
	// ErrHeld is Claim's answer when another worker holds the thread (the
	// returned Lease names it).
	ErrHeld = errors.New("cluster: thread is held by another worker")
	// ErrLost is Renew's and Release's answer when the lease is no longer
	// the caller's: it expired, and maybe another worker claimed it.
	ErrLost = errors.New("cluster: lease lost")
)

// Lease is a worker's ownership of one thread at one revision of the
// bucket's key.
type Lease struct {
	Thread   string
	Owner    string
	Revision uint64
}

// leaseValue is a lease as stored.
type leaseValue struct {
	Owner string `json:"owner"`
}

// decodeLease reads a stored lease; a value no worker wrote is an error.
func decodeLease(b []byte) (leaseValue, error) {
	var v leaseValue
	if err := json.Unmarshal(b, &v); err != nil {
		return leaseValue{}, fmt.Errorf("cluster: lease value: %w", err)
	}
	if v.Owner == "" {
		return leaseValue{}, errors.New("cluster: lease value without an owner")
	}
	return v, nil
}

// threadKey is a thread's key in the buckets and its token in subjects: its
// bytes in unpadded base64url, which both allow.
func threadKey(thread string) string { return base64.RawURLEncoding.EncodeToString([]byte(thread)) }

// LeaseBucket is the name of the lease bucket of the cluster called name.
func LeaseBucket(name string) string { return name + "_leases" }

// LeaseKey is a thread's key in the lease bucket (readers that hold no
// lease, an edge asking whether a thread is taken, look it up by it).
func LeaseKey(thread string) string { return threadKey(thread) }

// Leases is one worker's handle on the cluster's thread leases: the bucket
// <cluster>_leases, whose keys expire TTL after their last write.
type Leases struct {
	kv    jetstream.KeyValue
	owner string
	ttl   time.Duration
	value []byte
}

// LeaseOptions configure OpenLeases.
type LeaseOptions struct {
	Cluster  string        // cluster.name
	Owner    string        // this worker's id, unique in the cluster
	TTL      time.Duration // cluster.leaseTTL
	Replicas int           // copies of the bucket (1 for one node, 3 for a cluster)
}

// OpenLeases creates the lease bucket or opens it.
func OpenLeases(ctx context.Context, js jetstream.JetStream, o LeaseOptions) (*Leases, error) {
	if o.Owner == "" || o.TTL <= 0 {
		return nil, errors.New("cluster: leases need an owner and a TTL")
	}
	kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:         LeaseBucket(o.Cluster),
		Description:    "thread leases: one owning worker per thread",
		History:        1,
		TTL:            o.TTL,
		LimitMarkerTTL: max(o.TTL, time.Second),
		Storage:        jetstream.FileStorage,
		Replicas:       max(o.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: lease bucket: %w", err)
	}
	v, _ := json.Marshal(leaseValue{Owner: o.Owner})
	return &Leases{kv: kv, owner: o.Owner, ttl: o.TTL, value: v}, nil
}

// Owner is this worker's id.
func (l *Leases) Owner() string { return l.owner }

// TTL is how long a lease lasts without a renewal.
func (l *Leases) TTL() time.Duration { return l.ttl }

// Claim takes the thread if nobody holds it. A thread this worker already
// holds is returned as it is. A thread another worker holds gives ErrHeld
// and a Lease naming the holder.
func (l *Leases) Claim(ctx context.Context, thread string) (Lease, error) {
	key := threadKey(thread)
	// Between Create and Get the lease may expire, and on a cluster Get may
	// read a replica that has not yet seen the write Create ran into: try
	// again, a little later each time.
	for try := range 10 {
		if try > 0 {
			select {
			case <-ctx.Done():
				return Lease{}, ctx.Err()
			case <-time.After(time.Duration(try) * 5 * time.Millisecond):
			}
		}
		rev, err := l.kv.Create(ctx, key, l.value)
		if err == nil {
			return Lease{Thread: thread, Owner: l.owner, Revision: rev}, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return Lease{}, fmt.Errorf("cluster: claim: %w", err)
		}
		h, held, err := l.Holder(ctx, thread)
		if err != nil {
			return Lease{}, err
		}
		if !held {
			continue
		}
		if h.Owner == l.owner {
			// Its own, from before it started again (same id): written
			// again now, or it would lapse at the TTL after the last
			// renewal of the run before, perhaps before this run's
			// first, and the thread be taken over from under it.
			le, err := l.Renew(ctx, h)
			if errors.Is(err, ErrLost) {
				continue
			}
			return le, err
		}
		return h, ErrHeld
	}
	return Lease{}, fmt.Errorf("cluster: claim %q: the lease kept changing", thread)
}

// Holder returns the thread's current lease, if any.
func (l *Leases) Holder(ctx context.Context, thread string) (Lease, bool, error) {
	e, err := l.kv.Get(ctx, threadKey(thread))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("cluster: lease of %q: %w", thread, err)
	}
	v, err := decodeLease(e.Value())
	if err != nil {
		return Lease{}, false, err
	}
	return Lease{Thread: thread, Owner: v.Owner, Revision: e.Revision()}, true, nil
}

// Renew extends the lease by the TTL, if it is still held by this owner.
// A revision the owner does not know (an earlier renewal applied whose
// answer was lost: a timeout, a shutdown) is taken from the bucket when
// the lease there is still this owner's; otherwise ErrLost.
func (l *Leases) Renew(ctx context.Context, le Lease) (Lease, error) {
	for range 3 {
		rev, err := l.kv.Update(ctx, threadKey(le.Thread), l.value, le.Revision)
		if err == nil {
			le.Revision = rev
			return le, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return Lease{}, fmt.Errorf("cluster: renew: %w", err)
		}
		cur, ok, err := l.stillMine(ctx, le)
		if err != nil || !ok {
			return Lease{}, errors.Join(ErrLost, err)
		}
		le.Revision = cur
	}
	return Lease{}, ErrLost
}

// Release gives the thread up, if the lease is still this owner's (a
// lease that expired and was claimed elsewhere is left alone: ErrLost).
// Like Renew, it finds a revision the owner missed.
func (l *Leases) Release(ctx context.Context, le Lease) error {
	for range 3 {
		err := l.kv.Delete(ctx, threadKey(le.Thread), jetstream.LastRevision(le.Revision))
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("cluster: release: %w", err)
		}
		cur, ok, err := l.stillMine(ctx, le)
		if err != nil || !ok {
			return errors.Join(ErrLost, err)
		}
		le.Revision = cur
	}
	return ErrLost
}

// stillMine reads le's thread's lease: whether this owner holds it, at
// another revision than le's (the revision it has there).
func (l *Leases) stillMine(ctx context.Context, le Lease) (uint64, bool, error) {
	h, held, err := l.Holder(ctx, le.Thread)
	if err != nil {
		return 0, false, err
	}
	if !held || h.Owner != l.owner || h.Revision == le.Revision {
		return 0, false, nil
	}
	return h.Revision, true, nil
}

// WaitFree returns once nobody holds the thread: it was released, or it
// expired (the bucket marks an expiry, and the watch sees the mark).
func (l *Leases) WaitFree(ctx context.Context, thread string) error {
	w, err := l.kv.Watch(ctx, threadKey(thread))
	if err != nil {
		return fmt.Errorf("cluster: watch lease: %w", err)
	}
	defer w.Stop()
	initial := true
	free := true
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("cluster: lease watch closed")
			}
			if e == nil { // the initial values are in
				initial = false
				if free {
					return nil
				}
				continue
			}
			free = e.Operation() != jetstream.KeyValuePut
			if !initial && free {
				return nil
			}
		}
	}
}

// openBucket opens the bucket cfg names as it is when its TTL and replicas
// are as wanted, else creates it or updates it: rewriting a stream's config
// on every start races (in nats-server 2.15.2) with consumers (watches)
// being created by workers already running.
func openBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) { return openBucketOnce(ctx, js, cfg) })
}

func openBucketOnce(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if kv, err := js.KeyValue(ctx, cfg.Bucket); err == nil {
		if st, err := kv.Status(ctx); err == nil && st.TTL() == cfg.TTL && st.LimitMarkerTTL() == cfg.LimitMarkerTTL {
			if b, ok := st.(*jetstream.KeyValueBucketStatus); !ok || b.StreamInfo().Config.Replicas == cfg.Replicas {
				return kv, nil
			}
		}
	}
	return js.CreateOrUpdateKeyValue(ctx, cfg)
}
