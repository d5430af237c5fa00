package jsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// SeenSince lists, for an edge (which keeps no store), the threads of
// platform whose last message was handled since since, latest first, with
// their bindings read from the cluster's bindings bucket. As
// Store.SeenSince it keeps a thread not bound (yet) with only its ref: a
// worker that died between taking a thread's first message and saving its
// session leaves it so, and the worker taking it over answers there, so
// what people wrote while no edge was connected must be read too. A
// deleted thread has no mark (Store.DeleteBinding). It never writes, and
// never creates a bucket: before a worker has, no thread was seen.
func SeenSince(ctx context.Context, js jetstream.JetStream, clusterName, platform string, since time.Time) ([]store.Seen, error) {
	seen, err := js.KeyValue(ctx, clusterName+"_seen")
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	bindings, err := js.KeyValue(ctx, clusterName+"_bindings")
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	since = store.NormTime(since)
	var vs []seenMark
	err = allOf(ctx, seen, seenCodec, func(_ string, v seenMark) error {
		if v.Thread.Platform == platform && !v.At.Before(since) {
			vs = append(vs, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	var out []store.Seen
	for _, v := range vs {
		b, _, ok, err := get(ctx, bindings, threadKey(v.Thread), bindingCodec)
		if err != nil {
			return nil, fmt.Errorf("list seen threads: %w", err)
		}
		if !ok {
			b = store.Binding{Thread: v.Thread}
		}
		out = append(out, store.Seen{Binding: b, MessageID: v.MessageID, At: v.At})
	}
	slices.SortFunc(out, func(a, b store.Seen) int {
		return cmp.Or(b.At.Compare(a.At), threadCmp(a.Thread, b.Thread))
	})
	return out, nil
}
