package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startNode starts an embedded node on a free port in dir; it stops with
// the test.
func startNode(t testing.TB, dir string) *natsnode.Node {
	t.Helper()
	n, err := natsnode.Start(natsnode.Options{StoreDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n
}

// connect connects a JetStream client to url; it closes with the test.
func connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	opts, err := clustertest.ClientOptions(url)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, t.Name(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func openLeases(t testing.TB, js jetstream.JetStream, owner string, ttl time.Duration, replicas int) *cluster.Leases {
	t.Helper()
	l, err := cluster.OpenLeases(ctxFor(t), js, cluster.LeaseOptions{Cluster: "test", Owner: owner, TTL: ttl, Replicas: replicas})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func thread(i int) string { return fmt.Sprintf("discord/guild/%d", i) }

// otherPartition is the first test thread in a partition other than x's.
func otherPartition(x string) string {
	for i := 0; ; i++ {
		if cluster.PartitionOf(thread(i)) != cluster.PartitionOf(x) {
			return thread(i)
		}
	}
}

// atomicInt hands out 0, 1, 2, ...
type atomicInt struct{ n atomic.Int64 }

func (a *atomicInt) add() int { return int(a.n.Add(1) - 1) }
