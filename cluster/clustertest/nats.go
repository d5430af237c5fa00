// Package clustertest is the cluster's test harness: a JetStream cluster
// of three nodes in this process on loopback, the gateway binary built
// once per test, and its roles (gateway edge, gateway worker) as real
// processes that a test starts, stops, restarts and kills, waiting on
// their JSON log records. It names no platform: the adapters' tests bring
// their fakes and write the roles' configuration.
package clustertest

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acpgw/gateway/cluster/natsauth"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// StartNATS starts three JetStream nodes routed on loopback, with
// authentication as gateway nats sets it up (an auth directory of the
// test's: Auth, RoleYAML), TLS on clients and routes; they stop with the
// test. The route ports are picked free and then given to the
// nodes, so another process may take one in between: a start that fails is
// tried again with new ports (at most three times, each failure logged).
func StartNATS(t testing.TB) []*natsnode.Node {
	t.Helper()
	var last error
	for attempt := range 3 {
		nodes, err := tryNATS(t)
		if err == nil {
			return nodes
		}
		t.Logf("starting the NATS cluster, attempt %d: %v", attempt+1, err)
		last = err
	}
	t.Fatal(last)
	return nil
}

func tryNATS(t testing.TB) ([]*natsnode.Node, error) {
	var routes []string
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		routes = append(routes, l.Addr().String())
		l.Close()
	}
	auth, err := natsauth.Ensure(t.TempDir(), nil)
	if err != nil {
		return nil, err
	}
	var nodes []*natsnode.Node
	for i := range 3 {
		n, err := natsnode.Start(natsnode.Options{
			StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Name: fmt.Sprintf("n%d", i+1),
			ClusterName: "test", ClusterListen: routes[i], Routes: routes,
			Users: auth.Users("harness"), TLS: auth.ServerTLS(), RoutePassword: auth.Route, RouteTLS: auth.RouteTLS(),
		})
		if err != nil {
			for _, n := range nodes {
				n.Shutdown()
			}
			return nil, err
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		t.Cleanup(n.Shutdown)
		registerAuth(t, n.ClientURL(), auth)
	}
	return nodes, nil
}

// URL is the cluster.nats.url for the i-th client: every node, starting
// with node i % 3, so the roles spread over the nodes and each can fail
// over to the others.
func URL(nodes []*natsnode.Node, i int) string {
	var urls []string
	for k := range nodes {
		urls = append(urls, nodes[(i+k)%len(nodes)].ClientURL())
	}
	return strings.Join(urls, ",")
}

// StartNode starts one JetStream node on loopback; it stops with the test.
func StartNode(t testing.TB) *natsnode.Node {
	t.Helper()
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n
}

// JetStream connects to url for the test (the connection closes with it).
func JetStream(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
