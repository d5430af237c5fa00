package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/natsauth"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// On a 3-node NATS cluster, the roles started with cluster.replicas: 1 and
// then again with 3 move every bucket and stream they made to three
// replicas; a lease and a binding written before the node leading their
// buckets stops are read and written after it, and the thread is still
// answered.
func TestClusterReplicas(t *testing.T) {
	nodes := startNATS3(t)
	urls := func(first int) string {
		var us []string
		for k := range nodes {
			us = append(us, nodes[(first+k)%len(nodes)].ClientURL())
		}
		return strings.Join(us, ",")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The test's own client, on the node that stays up whatever the leader.
	nc, err := nats.Connect(urls(0), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	// A new cluster elects its JetStream leader first.
	if err := retryFor(ctx, func(ctx context.Context) error { _, err := js.AccountInfo(ctx); return err }); err != nil {
		t.Fatal(err)
	}

	start := func(replicas int) (api webAPI, edge, worker *role) {
		edge = startRole(t, "edge", replicasConfig(t, urls(1), "edge", replicas), "edge", "--id", "e1")
		line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
		worker = startRole(t, "w1", replicasConfig(t, urls(2), "w1", replicas), "worker", "--id", "w1")
		worker.stdout.wait(t, "w1 running", func(l string) bool { return strings.Contains(l, "running") })
		return webAPIAt(line[strings.Index(line, "http"):]), edge, worker
	}
	ask := func(api webAPI, th, text string) {
		t.Helper()
		if _, err := api.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": "echo " + text}); err != nil {
			t.Fatal(err)
		}
		if err := api.waitFor(th, func(m webMessage) bool { return m.Role == "assistant" && m.Text == text }); err != nil {
			t.Fatal(err)
		}
	}

	// One replica: the thread is bound and owned.
	api, edge, worker := start(1)
	out, err := api.post("api/threads", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	th := out["id"].(string)
	ask(api, th, "one, on one replica")
	if got := replicasByStream(ctx, t, js); got["KV_rep_bindings"] != 1 || got["KV_rep_leases"] != 1 {
		t.Fatalf("with cluster.replicas 1: %v", got)
	}
	worker.stop(syscall.SIGTERM)
	edge.stop(syscall.SIGTERM)

	// Three: every bucket and stream moves to three.
	api, _, _ = start(3)
	ask(api, th, "two, on three replicas")
	got := replicasByStream(ctx, t, js)
	// The streams the roles move are those they make.
	known := clusterStreams("rep")
	for _, name := range known {
		if _, ok := got[name]; !ok {
			t.Errorf("no stream %s among %v", name, got)
		}
	}
	for name, n := range got {
		if n != 3 {
			t.Errorf("%s has %d replicas, want 3", name, n)
		}
		if !slices.Contains(known, name) {
			t.Errorf("the roles made %s, which clusterStreams does not list (cluster.replicas would not move it)", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The node leading the leases leads the bindings too; the other two
	// hold every write.
	leases, err := js.KeyValue(ctx, "rep_leases")
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := js.KeyValue(ctx, "rep_bindings")
	if err != nil {
		t.Fatal(err)
	}
	leader := streamLeader(ctx, t, js, "KV_rep_leases")
	if err := retryFor(ctx, func(ctx context.Context) error {
		if l := streamLeader(ctx, t, js, "KV_rep_bindings"); l != leader {
			req, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": leader}})
			if _, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN.KV_rep_bindings", req); err != nil {
				return err
			}
			return fmt.Errorf("bindings led by %s, not %s", l, leader)
		}
		return allCurrent(ctx, js, "KV_rep_leases", "KV_rep_bindings")
	}); err != nil {
		t.Fatal(err)
	}
	lease, err := leases.Get(ctx, leaseKey(th))
	if err != nil {
		t.Fatalf("lease of %s: %v", th, err)
	}
	keys, err := bindings.Keys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("bindings %v, %v: want the thread's", keys, err)
	}
	binding, err := bindings.Get(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	var down *natsnode.Node
	for i, n := range nodes {
		if fmt.Sprintf("n%d", i+1) == leader {
			down = n
		}
	}
	if down == nil {
		t.Fatalf("no node named %s", leader)
	}
	t.Logf("stopping %s, the leader of the leases and the bindings", leader)
	w, err := leases.Watch(ctx, leaseKey(th), jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	down.Shutdown()

	// Read: the lease and the binding as they were.
	if err := retryFor(ctx, func(ctx context.Context) error {
		l, err := leases.Get(ctx, leaseKey(th))
		if err != nil {
			return err
		}
		if l.Revision() < lease.Revision() || string(l.Value()) != string(lease.Value()) {
			return fmt.Errorf("lease %q at %d, was %q at %d", l.Value(), l.Revision(), lease.Value(), lease.Revision())
		}
		b, err := bindings.Get(ctx, keys[0])
		if err != nil {
			return err
		}
		if b.Revision() != binding.Revision() || string(b.Value()) != string(binding.Value()) {
			return fmt.Errorf("binding %q at %d, was %q at %d", b.Value(), b.Revision(), binding.Value(), binding.Revision())
		}
		return nil
	}); err != nil {
		t.Fatalf("after %s stopped: %v", leader, err)
	}
	// Written: the binding compare-and-set, the lease renewed by its
	// worker.
	if err := retryFor(ctx, func(ctx context.Context) error {
		_, err := bindings.Update(ctx, keys[0], binding.Value(), binding.Revision())
		return err
	}); err != nil {
		t.Fatalf("binding after %s stopped: %v", leader, err)
	}
	for renewed := false; !renewed; {
		select {
		case e := <-w.Updates():
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				if string(e.Value()) != string(lease.Value()) {
					t.Fatalf("lease after %s stopped: %q, was %q", leader, e.Value(), lease.Value())
				}
				renewed = true
			}
		case <-ctx.Done():
			t.Fatalf("the worker did not renew its lease after %s stopped", leader)
		}
	}
	// And the thread is answered.
	ask(api, th, "three, after a node stopped")
}

// replicasConfig is a role's configuration on the cluster "rep" with the
// replicas given.
func replicasConfig(t *testing.T, natsURL, name string, replicas int) string {
	t.Helper()
	return roleConfig(t, name, fmt.Sprintf("  name: rep\n  replicas: %d\n  leaseTTL: 30s\n", replicas)+clustertest.RoleYAML(t, natsURL, ""))
}

// replicasByStream asks JetStream for every stream's config: the
// replicas of each of the cluster rep's.
func replicasByStream(ctx context.Context, t *testing.T, js jetstream.JetStream) map[string]int {
	t.Helper()
	got := map[string]int{}
	l := js.ListStreams(ctx)
	for si := range l.Info() {
		if n := si.Config.Name; strings.HasPrefix(n, "rep_") || strings.HasPrefix(n, "KV_rep_") || strings.HasPrefix(n, "OBJ_rep_") {
			got[n] = si.Config.Replicas
		}
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// streamLeader is the name of the node leading the stream.
func streamLeader(ctx context.Context, t *testing.T, js jetstream.JetStream, name string) string {
	t.Helper()
	var leader string
	if err := retryFor(ctx, func(ctx context.Context) error {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return err
		}
		si, err := s.Info(ctx)
		if err != nil {
			return err
		}
		if si.Cluster == nil || si.Cluster.Leader == "" {
			return errors.New("no leader")
		}
		leader = si.Cluster.Leader
		return nil
	}); err != nil {
		t.Fatalf("leader of %s: %v", name, err)
	}
	return leader
}

// allCurrent reports an error until each stream's two followers are
// current with its leader.
func allCurrent(ctx context.Context, js jetstream.JetStream, names ...string) error {
	for _, name := range names {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return err
		}
		si, err := s.Info(ctx)
		if err != nil {
			return err
		}
		if si.Cluster == nil || len(si.Cluster.Replicas) != 2 || slices.ContainsFunc(si.Cluster.Replicas, func(p *jetstream.PeerInfo) bool { return !p.Current }) {
			return fmt.Errorf("%s: followers not current: %+v", name, si.Cluster)
		}
	}
	return nil
}

// retryFor calls f, each try with 2s, until it succeeds or ctx ends (a
// stream elects a leader after one stopped).
func retryFor(ctx context.Context, f func(context.Context) error) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := f(tctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startNATS3 starts three JetStream nodes, n1 to n3, routed on loopback; they stop
// with the test. The route ports are picked free and then given to the
// nodes, so another process may take one in between: a start that fails
// is tried again with new ports (at most three times).
func startNATS3(t *testing.T) []*natsnode.Node {
	t.Helper()
	var last error
	for attempt := range 3 {
		var routes []string
		for range 3 {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			routes = append(routes, l.Addr().String())
			l.Close()
		}
		var nodes []*natsnode.Node
		for i := range 3 {
			n, err := natsnode.Start(natsnode.Options{
				StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Name: fmt.Sprintf("n%d", i+1),
				ClusterName: "rep", ClusterListen: routes[i], Routes: routes,
			})
			if err != nil {
				last = err
				break
			}
			nodes = append(nodes, n)
		}
		if len(nodes) == 3 {
			for _, n := range nodes {
				t.Cleanup(n.Shutdown)
			}
			return nodes
		}
		for _, n := range nodes {
			n.Shutdown()
		}
		t.Logf("starting the NATS cluster, attempt %d: %v", attempt+1, last)
	}
	t.Fatal(last)
	return nil
}

// A role asking for more replicas than the NATS has JetStream nodes stops
// at once with an error naming cluster.replicas.
func TestClusterReplicasAboveNodes(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	keys, err := natsauth.Ensure(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"worker", "edge"} {
		_, _, err := runCLI(t, "", role, "--id", "r1", "--set", "dataDir="+t.TempDir(), "--set", "metrics.listen=",
			"--set", "channels.web.listen=127.0.0.1:0", "--set", "channels.web.open=true", "--set", "cluster.nats.url="+n.ClientURL(), "--set", "cluster.replicas=3",
			"--set", "cluster.signingKey="+keys.File(natsauth.EdgeSigningKey), "--set", "cluster.edgeKeys="+keys.File(natsauth.EdgeKeys))
		if err == nil || !strings.Contains(err.Error(), "cluster.replicas must not exceed the NATS cluster's JetStream nodes") {
			t.Errorf("gateway %s with cluster.replicas 3 on one node: %v, want an error naming cluster.replicas", role, err)
		}
	}
}
