package edge_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/session/sessiontest"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const clusterName = "test"

// node is an embedded JetStream node for one test.
func startNode(t *testing.T) string {
	t.Helper()
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n.ClientURL()
}

// connect is one process's connection.
func connect(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, t.Name())
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

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func openInbound(t *testing.T, js jetstream.JetStream) *cluster.Inbound {
	t.Helper()
	in, err := cluster.OpenInbound(testCtx(t), js, cluster.InboundOptions{Cluster: clusterName, DuplicateWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// runningEdge is an edge process: its own connection, its Edge running
// until stop.
type runningEdge struct {
	e    *edge.Edge
	stop func()
}

// startEdge runs an edge for rec's adapter with id; it stops with the
// test, or earlier by stop.
func startEdge(t *testing.T, url, id string, ad channels.Adapter) *runningEdge {
	t.Helper()
	return startEdgeFor(t, url, id, "test", ad)
}

// startEdgeFor is startEdge for an adapter of platform.
func startEdgeFor(t *testing.T, url, id, platform string, ad channels.Adapter) *runningEdge {
	t.Helper()
	return startEdgeWith(t, url, edge.Options{ID: id, Platform: platform, Adapter: ad})
}

// startEdgeWith is startEdge with the options of o (its ID, Platform,
// Adapter and any other), on a connection of its own.
func startEdgeWith(t *testing.T, url string, o edge.Options) *runningEdge {
	t.Helper()
	id := o.ID
	nc, js := connect(t, url)
	o.Cluster, o.Conn, o.JS, o.Inbound, o.Log = clusterName, nc, js, openInbound(t, js), testlog.FailOnError(t)
	e, err := edge.New(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("edge %s: %v", id, err)
		}
		nc.Close()
	})
	t.Cleanup(stop)
	select {
	case <-e.Ready():
	case err := <-done:
		done <- err // for stop
		t.Fatalf("edge %s: %v", id, err)
	}
	return &runningEdge{e: e, stop: stop}
}

// openRemote opens the worker's proxy for platform test.
func openRemote(t *testing.T, nc *nats.Conn, js jetstream.JetStream) *remote.Adapter {
	t.Helper()
	return openRemoteFor(t, nc, js, "test")
}

// openRemoteFor is openRemote for platform.
func openRemoteFor(t *testing.T, nc *nats.Conn, js jetstream.JetStream, platform string) *remote.Adapter {
	t.Helper()
	a, err := remote.Open(testCtx(t), remote.Options{
		Cluster: clusterName, Platform: platform, Conn: nc, JS: js,
		Timeout: 300 * time.Millisecond, Log: testlog.FailOnError(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// worker is a worker process: the real session router with the demo
// agent, behind a cluster.Router and the remote adapter.
type worker struct {
	ends    *sessiontest.TurnEnds
	handled atomic.Int64 // events the cluster handed to this worker
}

func startWorker(t *testing.T, url string) *worker {
	t.Helper()
	nc, js := connect(t, url)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &worker{ends: sessiontest.NewTurnEnds()}
	ra := openRemote(t, nc, js)
	spec := sessiontest.DemoAgent(filepath.Join(dir, "demo-state"), demoAgentEnv)
	r := session.New(session.Options{
		Store:       st,
		EventLogDir: filepath.Join(dir, "events"),
		Agent:       func(string) (agent.Spec, bool) { return spec, true },
		Cwd:         dir,
		Open:        []string{"test"},
		Logger:      testlog.FailOnSDKError(t),
		OnTurnEnd:   w.ends.Record,
	})
	r.Add("test", ra)
	leases, err := cluster.OpenLeases(testCtx(t), js, cluster.LeaseOptions{Cluster: clusterName, Owner: "w1", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	handle := remote.Handler(ra)
	cr := cluster.NewRouter(cluster.RouterOptions{
		Cluster: clusterName, Conn: nc, Leases: leases, Inbound: openInbound(t, js),
		Retry: 20 * time.Millisecond, Log: testlog.FailOnError(t),
		Handle: func(ctx context.Context, ev cluster.Event) error {
			w.handled.Add(1)
			return handle(ctx, ev)
		},
	})
	var wg sync.WaitGroup
	wg.Go(func() { _ = ra.Run(ctx, r.Handle) })
	wg.Go(func() { _ = r.Run(ctx) })
	wg.Go(func() {
		if err := cr.Run(ctx); err != nil {
			t.Errorf("cluster router: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the worker did not shut down within 30 s")
		}
		st.Close()
	})
	return w
}

// waitEnd waits for the next turn end in th.
func (w *worker) waitEnd(t *testing.T, th channels.ThreadRef, rec *channeltest.Recorder) {
	t.Helper()
	if _, ok := w.ends.Next(testCtx(t), th); !ok {
		t.Fatalf("no turn end in %s; ops: %v", th, rec.OpsIn(th))
	}
}

var ann = channels.Author{ID: "u-ann", Name: "Ann"}

// text is the thread's agent text (its text messages, in order).
func text(rec *channeltest.Recorder, th channels.ThreadRef) string {
	var s string
	for _, m := range rec.Messages() {
		if m.Thread == th && m.Kind == channels.KindText {
			s += m.Text
		}
	}
	return s
}
