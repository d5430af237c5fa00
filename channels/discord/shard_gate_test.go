package discord

import (
	"context"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go/jetstream"
)

// TestEdgesIdentifyInTurn: shards run by separate processes (edges, each
// its own NATS connection here, and none using the process's turns) take
// their identify turns in the cluster's bucket: two started at once with
// an identify concurrency of 1 identify 5 s apart, and a shard restarted
// right after waits 5 s from the last identify too (the fake reports a
// violation otherwise).
func TestEdgesIdentifyInTurn(t *testing.T) {
	node, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Shutdown)
	// gate is one edge's view of the cluster's identify bucket.
	gate := func(edge string) IdentifyGate {
		nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: node.ClientURL()}}, edge)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		g, err := cluster.OpenTurns(testCtx(t), js, cluster.TurnsOptions{Bucket: "test_identify", Every: IdentifyInterval})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}

	f := newFake(t)
	f.shard(2, 1)
	_, th0 := f.addGuild(0)
	gates := []IdentifyGate{gate("edge-0"), gate("edge-1")}
	s := runShardsWith(t, f, 2, func(id int) Options { return Options{IdentifyGate: gates[id]} })
	f.mu.Lock()
	first := f.identifies
	f.mu.Unlock()
	if first != 2 {
		t.Fatalf("%d identifies, want 2", first)
	}

	// Edge 0 restarts at once, as a new process.
	s[0].stop(t)
	a := f.adapter(t, Options{Shard: Shard{ID: 0, Count: 2}, IdentifyGate: gate("edge-0 again")})
	ctx, cancel := context.WithCancel(context.Background())
	r := &live{a: a, in: make(chan channels.Inbound, 10), cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- a.Run(ctx, func(ctx context.Context, in channels.Inbound) {
			select {
			case r.in <- in:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() { r.stop(t) })
	select {
	case <-a.ready:
	case err := <-r.done:
		t.Fatalf("the restarted shard's Run returned %v before READY", err)
	case <-testCtx(t).Done():
		t.Fatal("the restarted shard never handled READY")
	}
	id := f.say(ann, th0, "hello", false)
	if in := r.next(t); string(in.ID) != id {
		t.Errorf("the restarted shard got %s, want %s", in.ID, id)
	}
	f.mu.Lock()
	identifies := f.identifies
	f.mu.Unlock()
	if identifies != 3 {
		t.Errorf("%d identifies, want 3", identifies)
	}
	r.stop(t)
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("fake discord saw protocol misuse: %q", v)
	}
}
