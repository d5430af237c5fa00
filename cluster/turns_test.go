package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
)

// TestTurns: a key taken cannot be taken again, from another connection,
// until its turn has passed since it was taken or renewed; another key
// does not wait; a wait ends with its context; a bad bucket is refused.
func TestTurns(t *testing.T) {
	n := startNode(t, t.TempDir())
	ctx := ctxFor(t)
	const every = time.Second
	open := func() *cluster.Turns {
		_, js := connect(t, n.ClientURL())
		tu, err := cluster.OpenTurns(ctx, js, cluster.TurnsOptions{Bucket: "test_identify", Every: every})
		if err != nil {
			t.Fatal(err)
		}
		return tu
	}
	a, b := open(), open()

	before := time.Now()
	if err := a.Take(ctx, "0"); err != nil {
		t.Fatal(err)
	}
	if err := b.Take(ctx, "1"); err != nil || time.Since(before) >= every {
		t.Errorf("another key took %v (%v), want no wait", time.Since(before), err)
	}
	short, cancel := context.WithTimeout(ctx, every/2)
	defer cancel()
	if err := b.Take(short, "0"); err != context.DeadlineExceeded {
		t.Errorf("Take of a taken key = %v, want its context's error", err)
	}
	// Renewed half a turn in, the key stays taken a whole turn from then.
	renewed := time.Now()
	if err := a.Renew(ctx, "0"); err != nil {
		t.Fatal(err)
	}
	if err := b.Take(ctx, "0"); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(renewed); got < every {
		t.Errorf("the key was taken again %v after its renewal, want at least %v", got, every)
	}

	_, js := connect(t, n.ClientURL())
	if _, err := cluster.OpenTurns(ctx, js, cluster.TurnsOptions{Bucket: "test_identify"}); err == nil {
		t.Error("OpenTurns took a turn of 0")
	}
}
