package cluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// Roles starting together make the same buckets at once; the one told
// that the stream name is in use (it was just made) asks again and gets
// it, where an error of another kind ends the attempt at once.
func TestWhileSettlingAsksAgainOnlyWhileTheClusterSettles(t *testing.T) {
	inUse := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamNameInUse, Description: "stream name already in use"}
	calls := 0
	got, err := cluster.WhileSettling(t.Context(), func(context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", inUse
		}
		return "bucket", nil
	})
	if err != nil || got != "bucket" || calls != 3 {
		t.Fatalf("got %q, %v after %d calls; want the bucket after 3", got, err, calls)
	}

	bad := &jetstream.APIError{Code: 500, ErrorCode: 10023, Description: "insufficient resources"}
	calls = 0
	_, err = cluster.WhileSettling(t.Context(), func(context.Context) (string, error) {
		calls++
		return "", bad
	})
	if !errors.Is(err, bad) || calls != 1 {
		t.Fatalf("a lasting error: %v after %d calls; want it after 1", err, calls)
	}
}

// Many roles making the same bucket at once, each with its own
// description (as edges and workers do), all get it.
func TestBucketsMadeAtOnce(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
				return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "together", Description: string(rune('a' + i))})
			})
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
