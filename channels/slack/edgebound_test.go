package slack

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// An edge that starts with a fresh adapter knows the threads bound in the
// cluster's store (as gateway edge wires it): a message without a mention
// in a thread a worker bound before reaches the inbound stream, and so
// does one in a thread bound after the edge first judged it (the mention
// went to another edge) once the lookup's answer expired, and so does one
// in a thread a worker has claimed (its lease) but not bound yet (the
// agent's session is starting); a message in a thread nobody bound or
// claimed does not.
func TestEdgeKnowsBoundThreads(t *testing.T) {
	ctx := testCtx(t)
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	node, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Shutdown)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: node.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	in, err := cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// The worker's store.
	st, err := jsstore.Open(ctx, js, jsstore.Options{Cluster: "test"})
	if err != nil {
		t.Fatal(err)
	}
	const before, later, never, leased = "1700000000.000111", "1700000000.000222", "1700000000.000333", "1700000000.000444"
	if err := st.PutBinding(ctx, store.Binding{Thread: ref(fakeChannel, before), Agent: "demo", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	// A worker took the mention of thread leased; its binding is not
	// written yet.
	leases, err := cluster.OpenLeases(ctx, js, cluster.LeaseOptions{Cluster: "test", Owner: "w1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Claim(ctx, ref(fakeChannel, leased).String()); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	bound := jsstore.NewBoundThreads(js, jsstore.BoundOptions{Cluster: "test", TTL: 2 * time.Second, Now: clock, Log: testlog.FailOnError(t)})
	asked := make(chan channels.ThreadRef, 10)
	a := f.adapter(t, Options{RecheckUnknown: true, KnownThread: func(ctx context.Context, th channels.ThreadRef) bool {
		ok := bound.Bound(ctx, th)
		asked <- th
		return ok
	}})
	if _, err := a.Detect(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := edge.New(ctx, edge.Options{
		Cluster: "test", ID: "e1", Platform: Platform, Adapter: a,
		Conn: nc, JS: js, Inbound: in, Log: testlog.FailOnError(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("edge: %v", err)
		}
	})
	select {
	case <-e.Ready():
	case err := <-done:
		done <- err
		t.Fatal(err)
	}

	say := func(thread, text string, mention bool) {
		t.Helper()
		if _, err := f.say(ctx, sayOptions{user: "U0ANN", thread: thread, text: text, mention: mention}); err != nil {
			t.Fatal(err)
		}
	}
	waitAsked := func(thread string) {
		t.Helper()
		for {
			select {
			case th := <-asked:
				if th.Thread == thread {
					return
				}
			case <-ctx.Done():
				t.Fatalf("the store was not asked about thread %s", thread)
			}
		}
	}
	say(never, "not for the gateway", false)
	say(before, "after the restart", false)
	say(leased, "while its session starts", false)
	say(later, "before its binding", false)
	waitAsked(later)
	// The mention reached another edge; its worker bound the thread.
	if err := st.PutBinding(ctx, store.Binding{Thread: ref(fakeChannel, later), Agent: "demo", SessionID: "s2"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(3 * time.Second)
	mu.Unlock()
	say(later, "after its binding", false)
	say(never, "sentinel", true) // judged after the thread's first message

	cons, err := js.CreateConsumer(ctx, "test_inbound", jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 4 {
		m, err := cons.Next(jetstream.FetchContext(ctx))
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		w, err := wire.DecodeInbound(m.Data())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, w.Text)
		_ = m.Ack()
	}
	slices.Sort(got)
	if want := []string{"after its binding", "after the restart", "sentinel", "while its session starts"}; !slices.Equal(got, want) {
		t.Errorf("published %q, want %q", got, want)
	}
	s, err := js.Stream(ctx, "test_inbound")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq != 4 {
		t.Errorf("%d events published, want the 4 of bound and leased threads", info.State.LastSeq)
	}
}
