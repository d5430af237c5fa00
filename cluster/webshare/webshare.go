// Package webshare is the web chat's state shared by the edges of a
// cluster that serve it: a JetStream key-value bucket, <cluster>_web,
// keeping the latest value of each key (History 1), whose writes every edge
// follows from the start. It knows nothing of what the keys mean (the web
// chat's records, channels/web's Shared); cmd/gateway wires the two.
//
// The files of the chat (an agent's uploads) are in the object store
// <cluster>_web_files, each removed with its thread.
//
// Retention is bounded by the state itself: one value a key, a deleted
// key's marker kept for MarkerTTL (so a follower behind sees it), and keys
// purged under a prefix (a deleted thread) gone at once.
package webshare

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultMarkerTTL is how long a deleted key's marker stays in the bucket
// by default.
const DefaultMarkerTTL = 24 * time.Hour

// ErrStale is Put's error when the key changed since the revision given.
var ErrStale = errors.New("webshare: the key changed meanwhile")

// Options configure Open.
type Options struct {
	// Cluster is the cluster's name (cluster.name); the bucket is
	// <Cluster>_web. Required.
	Cluster string
	// Replicas of the bucket (default 1).
	Replicas int
	// MarkerTTL is how long a deleted key's marker stays (default
	// DefaultMarkerTTL; at least a second).
	MarkerTTL time.Duration
}

// Log is the shared state: the bucket, opened.
type Log struct {
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	files  jetstream.ObjectStore
	stream string // the bucket's stream, KV_<bucket>
	pre    string // the keys' subject prefix, $KV.<bucket>.
	ttl    time.Duration
}

// Open opens the bucket <cluster>_web, creating it when missing.
func Open(ctx context.Context, js jetstream.JetStream, o Options) (*Log, error) {
	if o.Cluster == "" {
		return nil, errors.New("webshare: the cluster needs a name")
	}
	if o.MarkerTTL <= 0 {
		o.MarkerTTL = DefaultMarkerTTL
	}
	o.MarkerTTL = max(o.MarkerTTL, time.Second)
	bucket := o.Cluster + "_web"
	kv, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		if kv, err := js.KeyValue(ctx, bucket); err == nil {
			return kv, nil
		}
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: bucket, Description: "the web chat's state, shared by the edges serving it",
			History: 1, Storage: jetstream.FileStorage, Replicas: max(o.Replicas, 1),
			LimitMarkerTTL: o.MarkerTTL,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("webshare: bucket %s: %w", bucket, err)
	}
	files, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.ObjectStore, error) {
		if files, err := js.ObjectStore(ctx, bucket+"_files"); err == nil {
			return files, nil
		}
		return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: bucket + "_files", Description: "the files of the web chat, shared by the edges serving it",
			Storage: jetstream.FileStorage, Replicas: max(o.Replicas, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("webshare: object store %s_files: %w", bucket, err)
	}
	return &Log{js: js, kv: kv, files: files, stream: "KV_" + bucket, pre: "$KV." + bucket + ".", ttl: o.MarkerTTL}, nil
}

// Put writes value under key when its revision is still rev (0: it has no
// value), and returns the new revision; ErrStale when it changed.
func (l *Log) Put(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	var n uint64
	var err error
	if rev == 0 {
		n, err = l.kv.Create(ctx, key, value)
	} else {
		n, err = l.kv.Update(ctx, key, value, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("%s: %w", key, ErrStale)
	}
	if err != nil {
		return 0, fmt.Errorf("webshare: put %s: %w", key, err)
	}
	return n, nil
}

// Delete removes key, leaving a marker for MarkerTTL that the followers
// see, and returns the marker's revision.
func (l *Log) Delete(ctx context.Context, key string) (uint64, error) {
	m := nats.NewMsg(l.pre + key)
	m.Header.Set("KV-Operation", "PURGE")
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	ack, err := l.js.PublishMsg(ctx, m, jetstream.WithMsgTTL(l.ttl))
	if err != nil {
		return 0, fmt.Errorf("webshare: delete %s: %w", key, err)
	}
	return ack.Sequence, nil
}

// Head returns the revision of the latest write.
func (l *Log) Head(ctx context.Context) (uint64, error) {
	s, err := l.js.Stream(ctx, l.stream)
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = s.Info(ctx); err == nil {
			return info.State.LastSeq, nil
		}
	}
	return 0, fmt.Errorf("webshare: the latest revision: %w", err)
}

// Purge removes every key under prefix (ending with "."), leaving no
// marker: the followers are not told.
func (l *Log) Purge(ctx context.Context, prefix string) error {
	if !strings.HasSuffix(prefix, ".") || strings.ContainsAny(prefix, "*> ") {
		return fmt.Errorf("webshare: purge %q: not a key prefix ending with a dot", prefix)
	}
	s, err := l.js.Stream(ctx, l.stream)
	if err == nil {
		err = s.Purge(ctx, jetstream.WithPurgeSubject(l.pre+prefix+">"))
	}
	if err != nil {
		return fmt.Errorf("webshare: purge %s: %w", prefix, err)
	}
	return nil
}

// Change is one write: a value, or a deletion.
type Change struct {
	Rev     uint64
	Key     string
	Value   []byte
	Deleted bool
}

// Follow calls fn with the latest value of each key (and the markers of
// deleted keys) in the order of their revisions, then caughtUp, then each
// write as it happens, until ctx ends (nil) or the watch fails.
func (l *Log) Follow(ctx context.Context, fn func(Change), caughtUp func()) error {
	w, err := l.kv.WatchAll(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("webshare: watch: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("webshare: the watch ended")
			}
			if e == nil {
				caughtUp()
				continue
			}
			c := Change{Rev: e.Revision(), Key: e.Key(), Value: e.Value()}
			c.Deleted = e.Operation() != jetstream.KeyValuePut
			fn(c)
		}
	}
}

// ErrNoFile is GetFile's error for a name with no file.
var ErrNoFile = errors.New("webshare: no such file")

// PutFile keeps data under name.
func (l *Log) PutFile(ctx context.Context, name string, data []byte) error {
	if _, err := l.files.PutBytes(ctx, name, data); err != nil {
		return fmt.Errorf("webshare: keep file %s: %w", name, err)
	}
	return nil
}

// GetFile returns file name and when it was kept; ErrNoFile when none.
func (l *Log) GetFile(ctx context.Context, name string) ([]byte, time.Time, error) {
	info, err := l.files.GetInfo(ctx, name)
	if err == nil {
		var data []byte
		if data, err = l.files.GetBytes(ctx, name); err == nil {
			return data, info.ModTime, nil
		}
	}
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, time.Time{}, fmt.Errorf("%s: %w", name, ErrNoFile)
	}
	return nil, time.Time{}, fmt.Errorf("webshare: read file %s: %w", name, err)
}

// DeleteFile removes file name; none is no error.
func (l *Log) DeleteFile(ctx context.Context, name string) error {
	if err := l.files.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("webshare: delete file %s: %w", name, err)
	}
	return nil
}
