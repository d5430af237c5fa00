package jsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// seenSkew is how far a worker's clock (which dates a mark) may run ahead
// of the NATS server's (which dates its write) for seenMarks to find the
// mark still.
var seenSkew = time.Minute

// seenMarks returns the marks of bucket, of the keys matching keys (a
// subject wildcard), that were handled since since. It reads them as the
// messages of the bucket's stream written since since (less seenSkew),
// which the server finds by time (the stream keeps one message per key,
// its last value or its deletion): the threads seen long ago, however
// many, are not sent at all.
func seenMarks(ctx context.Context, js jetstream.JetStream, bucket, keys string, since time.Time) ([]seenMark, error) {
	since = store.NormTime(since)
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$KV." + bucket + "." + keys}, DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if from := since.Add(-seenSkew); since.After(time.UnixMilli(0)) && from.After(time.UnixMilli(0)) {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &from
	}
	stream := "KV_" + bucket
	c, done, err := ordered(ctx,
		func(ctx context.Context, cfg jetstream.OrderedConsumerConfig) (jetstream.Consumer, error) {
			return js.OrderedConsumer(ctx, stream, cfg)
		},
		func(ctx context.Context, name string) error { return js.DeleteConsumer(ctx, stream, name) }, cfg)
	if err != nil {
		return nil, err
	}
	defer done()
	last := map[string]seenMark{} // a key written again while read is given twice
	err = readConsumer(c, func(m jetstream.Msg, _ uint64, data []byte) error {
		key := strings.TrimPrefix(m.Subject(), "$KV."+bucket+".")
		if op := m.Headers().Get("KV-Operation"); op != "" { // DEL, PURGE
			delete(last, key)
			return nil
		}
		v, err := seenCodec.dec(data)
		if err != nil {
			return fmt.Errorf("key %s: %w", key, err)
		}
		if v.At.Before(since) {
			delete(last, key)
		} else {
			last[key] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return slices.Collect(maps.Values(last)), nil
}

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
	bindings, err := js.KeyValue(ctx, clusterName+"_bindings")
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	vs, err := seenMarks(ctx, js, clusterName+"_seen", token(platform)+".>", since)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list seen threads: %w", err)
	}
	return seenBound(ctx, vs, func(ctx context.Context, t channels.ThreadRef) (store.Binding, bool, error) {
		b, _, ok, err := get(ctx, bindings, threadKey(t), bindingCodec)
		return b, ok, err
	})
}

// seenBound returns the marks vs as store.Seen, latest first, each with
// its thread's binding as binding reads it (a thread not bound has only
// its ref).
func seenBound(ctx context.Context, vs []seenMark, binding func(context.Context, channels.ThreadRef) (store.Binding, bool, error)) ([]store.Seen, error) {
	var out []store.Seen
	for _, v := range vs {
		b, ok, err := binding(ctx, v.Thread)
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
