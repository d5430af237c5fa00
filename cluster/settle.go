package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// settleFor bounds how long WhileSettling asks again.
var settleFor = 30 * time.Second

// jsClusterUnavailable is JetStream's "temporarily unavailable" (its meta
// leader being elected).
const jsClusterUnavailable jetstream.ErrorCode = 10008

// WhileSettling runs f, which makes or opens JetStream streams and
// buckets, again while it fails the way a JetStream cluster fails as it
// settles: roles starting together create the same bucket at once (the
// loser is told the stream name is in use; it exists now), the meta
// leader is being elected, a node does not answer yet. Other errors, and
// the end of ctx, end it at once; after settleFor the last error is
// returned.
func WhileSettling[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(settleFor)
	wait := 100 * time.Millisecond
	for {
		v, err := f(ctx)
		if err == nil || ctx.Err() != nil || !settling(err) || time.Now().After(deadline) {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// settling reports whether err is one a settling JetStream cluster gives.
func settling(err error) bool {
	if apiErr, ok := errors.AsType[*jetstream.APIError](err); ok {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamNameInUse, jsClusterUnavailable:
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
}
