package edge_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// inboundStream is the inbound stream of the tests' cluster.
const inboundStream = clusterName + "_inbound"

// stopping is an adapter whose Run closes stopped when it returns: the
// edge stopped reading.
type stopping struct {
	channels.Adapter
	stopped chan struct{}
}

func (a stopping) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	defer close(a.stopped)
	return a.Adapter.Run(ctx, h)
}

// publishingEdge runs an edge for ad whose publishes wait 200ms for their
// acks, with options changed by set; stop stops it (and returns once Run
// returned), as does the test's end.
func publishingEdge(t *testing.T, url string, ad channels.Adapter, set ...func(*edge.Options)) (stop func()) {
	t.Helper()
	nc, js := connect(t, url)
	o := edge.Options{
		Cluster: clusterName, ID: "e1", Platform: "test", Adapter: ad,
		Conn: nc, JS: js, Inbound: openInbound(t, js), PublishTimeout: 200 * time.Millisecond,
		Log: testlog.FailOnError(t),
	}
	for _, f := range set {
		f(&o)
	}
	e, err := edge.New(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("edge: %v", err)
		}
		nc.Close()
	})
	t.Cleanup(stop)
	select {
	case <-e.Ready():
	case err := <-done:
		done <- err
		t.Fatalf("edge: %v", err)
	}
	return stop
}

// holdInbound removes the inbound stream and subscribes to its subjects
// in its place: the edge's publishes reach the subscription and are never
// acked. It returns the subscription's messages.
func holdInbound(t *testing.T, nc *nats.Conn, js jetstream.JetStream) (*nats.Subscription, <-chan *nats.Msg) {
	t.Helper()
	if err := js.DeleteStream(testCtx(t), inboundStream); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan *nats.Msg, 1000)
	sub, err := nc.ChanSubscribe(clusterName+".in.>", msgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub, msgs
}

// awaitIDs reads msgs until it saw want distinct Nats-Msg-Ids, or fails
// after 10s saying why.
func awaitIDs(t *testing.T, msgs <-chan *nats.Msg, want int, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for len(seen) < want {
		select {
		case m := <-msgs:
			seen[m.Header.Get(jetstream.MsgIDHeader)] = true
		case <-ctx.Done():
			t.Fatalf("%d of %d events published before any was acked (%v): %s", len(seen), want, seen, why)
		}
	}
}

// storedIDs lists the Nats-Msg-Ids of the messages in the inbound stream.
func storedIDs(t *testing.T, js jetstream.JetStream) []string {
	t.Helper()
	ctx := testCtx(t)
	s, err := js.Stream(ctx, inboundStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		ids = append(ids, m.Header.Get(jetstream.MsgIDHeader))
	}
	slices.Sort(ids)
	return ids
}

// The first events of many threads are in flight at once: each is
// published before any is acked (the stream's place is taken by a
// subscription that never answers), and once the stream is back each is
// tried again and stored once.
func TestPublishesOfThreadsInFlightTogether(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	rec := channeltest.New(channeltest.Options{})
	stop := publishingEdge(t, url, rec.Adapter())
	hold, msgs := holdInbound(t, nc, js)
	const threads = 8
	delivered := make(chan error, 1)
	go func() {
		for i := range threads {
			in := channels.Inbound{Thread: rec.Thread(fmt.Sprint("t", i)), Author: ann, Text: "hello", ID: channels.MessageID(fmt.Sprint("m", i))}
			if err := rec.Deliver(testCtx(t), in); err != nil {
				delivered <- err
				return
			}
		}
		delivered <- nil
	}()
	awaitIDs(t, msgs, threads, "the edge waits for each ack before it publishes the next event")
	if err := hold.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	openInbound(t, js) // the stream back
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	stop()
	var want []string
	for i := range threads {
		want = append(want, fmt.Sprintf("test:c/m%d", i))
	}
	if got := storedIDs(t, js); !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
}

// The events an edge took are stored before its Run returns: stopped
// while its publishes wait for acks that will not come, it tries them
// again once the stream is back, after the adapter stopped reading.
func TestStopStoresEventsTaken(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	rec := channeltest.New(channeltest.Options{})
	ad := stopping{Adapter: rec.Adapter(), stopped: make(chan struct{})}
	stop := publishingEdge(t, url, ad)
	hold, msgs := holdInbound(t, nc, js)
	const threads = 8
	var want []string
	for i := range threads {
		in := channels.Inbound{Thread: rec.Thread(fmt.Sprint("t", i)), Author: ann, Text: "hello", ID: channels.MessageID(fmt.Sprint("m", i))}
		if err := rec.Deliver(testCtx(t), in); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("test:c/m%d", i))
	}
	awaitIDs(t, msgs, threads, "the edge did not publish the events it took")
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	<-ad.stopped // the edge reads no more
	if err := hold.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	openInbound(t, js)
	<-stopped
	if got := storedIDs(t, js); !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
}

// One thread's events are stored in the order the platform gave them,
// while other threads' are in flight and though a stream refuses some: it
// keeps one message of a thread (a subject) at a time and refuses the
// next until the one before is taken, so each thread's second event is
// refused at first and tried again.
func TestThreadOrderKeptWhenStreamRefuses(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	ctx := testCtx(t)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: inboundStream, Subjects: []string{clusterName + ".in.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: time.Minute,
		MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew, DiscardNewPerSubject: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	tries := make(chan *nats.Msg, 10000) // every publish, stored or refused
	if _, err := nc.ChanSubscribe(clusterName+".in.>", tries); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	rec := channeltest.New(channeltest.Options{})
	publishingEdge(t, url, rec.Adapter()) // opens the stream as it is
	const threads, each = 4, 4
	id := func(i, k int) string { return fmt.Sprintf("t%d-m%d", i, k) }
	for k := range each {
		for i := range threads {
			in := channels.Inbound{Thread: rec.Thread(fmt.Sprint("t", i)), Author: ann, Text: fmt.Sprint(k), ID: channels.MessageID(id(i, k))}
			if err := rec.Deliver(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Each thread's second event is tried while its first is in the
	// stream, and refused.
	attempts := map[string]int{}
	secondTried := func() bool {
		for i := range threads {
			if attempts["test:c/"+id(i, 1)] == 0 {
				return false
			}
		}
		return true
	}
	for !secondTried() {
		select {
		case m := <-tries:
			attempts[m.Header.Get(jetstream.MsgIDHeader)]++
		case <-ctx.Done():
			t.Fatalf("not every thread's second event was tried: %v", attempts)
		}
	}
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "check", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for n := 0; n < threads*each; n++ {
		m, err := c.Next(jetstream.FetchContext(ctx))
		if err != nil {
			t.Fatalf("after %d events: %v (stored so far %v)", n, err, got)
		}
		th := m.Headers().Get("Gateway-Thread")
		got[th] = append(got[th], m.Headers().Get(jetstream.MsgIDHeader))
		if err := m.DoubleAck(ctx); err != nil { // taken: the thread's next may be stored
			t.Fatal(err)
		}
	}
	for i := range threads {
		var want []string
		for k := range each {
			want = append(want, "test:c/"+id(i, k))
		}
		if th := rec.Thread(fmt.Sprint("t", i)).String(); !slices.Equal(got[th], want) {
			t.Errorf("thread %s stored %q, want %q", th, got[th], want)
		}
	}
	for len(tries) > 0 {
		m := <-tries
		attempts[m.Header.Get(jetstream.MsgIDHeader)]++
	}
	for i := range threads {
		if n := attempts["test:c/"+id(i, 1)]; n < 2 {
			t.Errorf("event %s was tried %d times; the stream refused it at first, so want at least 2", id(i, 1), n)
		}
	}
}

// One thread's events keep their order, each stored once, across a NATS
// node's restart under the edge: events taken while the node is down
// (and those whose acks it took down with it) are tried again once it is
// back.
func TestThreadOrderKeptAcrossNodeRestart(t *testing.T) {
	dir := t.TempDir()
	n, err := natsnode.Start(natsnode.Options{StoreDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	url := n.ClientURL()
	t.Cleanup(n.Shutdown)
	rec := channeltest.New(channeltest.Options{})
	stop := publishingEdge(t, url, rec.Adapter())
	const threads, each = 4, 6
	id := func(i, k int) string { return fmt.Sprintf("t%d-m%d", i, k) }
	deliver := func(from, to int) {
		for k := from; k < to; k++ {
			for i := range threads {
				in := channels.Inbound{Thread: rec.Thread(fmt.Sprint("t", i)), Author: ann, Text: fmt.Sprint(k), ID: channels.MessageID(id(i, k))}
				if err := rec.Deliver(testCtx(t), in); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	deliver(0, each/2)
	n.Shutdown()
	deliver(each/2, each) // taken while the node is down
	again, err := natsnode.Start(natsnode.Options{StoreDir: dir, Listen: strings.TrimPrefix(url, "nats://")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Shutdown)
	stop() // returns once every event taken is stored
	_, js := connect(t, url)
	ctx := testCtx(t)
	s, err := js.Stream(ctx, inboundStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		th := m.Header.Get("Gateway-Thread")
		got[th] = append(got[th], m.Header.Get(jetstream.MsgIDHeader))
	}
	for i := range threads {
		var want []string
		for k := range each {
			want = append(want, "test:c/"+id(i, k))
		}
		if th := rec.Thread(fmt.Sprint("t", i)).String(); !slices.Equal(got[th], want) {
			t.Errorf("thread %s stored %q, want %q", th, got[th], want)
		}
	}
}

// acksAfter is an adapter that acknowledges each event to its platform
// once the handler returned (as the web chat's 202 does), marking the
// handler's context so; acked is told of each acknowledgement.
type acksAfter struct {
	channels.Adapter
	acked func(channels.Inbound)
}

func (a acksAfter) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	return a.Adapter.Run(ctx, func(ctx context.Context, in channels.Inbound) {
		h(channels.AckAfterHandler(ctx), in)
		a.acked(in)
	})
}

// An event the adapter acknowledges once the handler returns is stored
// before the handler returns: the acknowledgement, given while the
// stream's place is held and again after the stream is back, finds it in
// the stream.
func TestAckAfterHandlerWaitsUntilStored(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	rec := channeltest.New(channeltest.Options{})
	inStream := make(chan uint64, 1) // the stream's messages when the event was acknowledged
	ad := acksAfter{Adapter: rec.Adapter(), acked: func(channels.Inbound) {
		ctx := testCtx(t)
		var n uint64
		if s, err := js.Stream(ctx, inboundStream); err == nil {
			if info, err := s.Info(ctx); err == nil {
				n = info.State.Msgs
			}
		}
		inStream <- n
	}}
	publishingEdge(t, url, ad)
	hold, msgs := holdInbound(t, nc, js)
	delivered := make(chan error, 1)
	go func() {
		delivered <- rec.Deliver(testCtx(t), channels.Inbound{Thread: rec.Thread("t"), Author: ann, Text: "hello", ID: "m1"})
	}()
	awaitIDs(t, msgs, 1, "the edge did not publish the event")
	if err := hold.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	openInbound(t, js)
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	if n := <-inStream; n != 1 {
		t.Errorf("the event was acknowledged with %d messages in the stream, want 1 (it was acknowledged before it was stored)", n)
	}
}

// records is a slog handler keeping the messages of the records it is
// given.
type records struct {
	mu   sync.Mutex // guards msgs
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}

func (r *records) has(msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.msgs, msg)
}

// An edge stopped while the stream stays away waits Drain for the events
// it took, then gives them up and says so: it does not wait forever.
func TestStopGivesUpAfterDrain(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	rec := channeltest.New(channeltest.Options{})
	logs := &records{}
	stop := publishingEdge(t, url, rec.Adapter(), func(o *edge.Options) {
		o.Drain = 300 * time.Millisecond
		o.Log = slog.New(logs)
	})
	_, msgs := holdInbound(t, nc, js)
	if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: rec.Thread("t"), Author: ann, Text: "hello", ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	awaitIDs(t, msgs, 1, "the edge did not publish the event")
	stop() // returns (a test that hangs here fails by its timeout)
	if !logs.has("ERROR edge: an event lost") {
		t.Errorf("logged %q, want the event's loss at level ERROR", logs.msgs)
	}
}

// An event larger than a NATS message holds (a message of 1.5 MiB; the
// server takes 1 MiB) can never be stored: it is logged as lost, with
// why, and the thread's next event is stored after it instead of waiting
// behind it for ever.
func TestEventTooLargeIsReportedNotRetried(t *testing.T) {
	url := startNode(t)
	_, js := connect(t, url)
	rec := channeltest.New(channeltest.Options{})
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelError}))
	stop := publishingEdge(t, url, rec.Adapter(), func(o *edge.Options) { o.Log = log })
	th := rec.Thread("big")
	for _, in := range []channels.Inbound{
		{Thread: th, Author: ann, Text: strings.Repeat("x", 1536<<10), ID: "m1"},
		{Thread: th, Author: ann, Text: "after", ID: "m2"},
	} {
		if err := rec.Deliver(testCtx(t), in); err != nil {
			t.Fatal(err)
		}
	}
	stop() // waits for the events taken to be stored, or given up
	if got, want := storedIDs(t, js), []string{"test:c/m2"}; !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "an event lost") || !strings.Contains(logs.String(), "maximum payload exceeded") {
		t.Errorf("logged %q, want the event lost and why", logs.String())
	}
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
