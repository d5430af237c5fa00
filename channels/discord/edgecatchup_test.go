package discord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// edgeNATS is an embedded JetStream node with the cluster "test"'s
// inbound stream, for an edge in a test.
type edgeNATS struct {
	nc *nats.Conn
	js jetstream.JetStream
	in *cluster.Inbound
}

func startEdgeNATS(t *testing.T) *edgeNATS {
	t.Helper()
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
	in, err := cluster.OpenInbound(testCtx(t), js, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &edgeNATS{nc: nc, js: js, in: in}
}

// runEdge runs an edge serving a on n until the test ends, or until
// cancel (Run's context ends, a SIGTERM) and wait.
func (n *edgeNATS) runEdge(t *testing.T, id string, a *Adapter, o edge.Options) (cancel, wait func()) {
	t.Helper()
	o.Cluster, o.ID, o.Platform, o.Adapter = "test", id, Platform, a
	o.Conn, o.JS, o.Inbound = n.nc, n.js, n.in
	if o.Log == nil {
		o.Log = testlog.FailOnError(t)
	}
	e, err := edge.New(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var once sync.Once
	wait = func() {
		once.Do(func() {
			if err := <-done; err != nil {
				t.Errorf("edge %s: %v", id, err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wait() })
	select {
	case <-e.Ready():
	case err := <-done:
		done <- err
		t.Fatalf("edge %s: %v", id, err)
	}
	return cancel, wait
}

// stored lists the Nats-Msg-Id of every event on the inbound stream, in
// the order stored.
func (n *edgeNATS) stored(t *testing.T) []string {
	t.Helper()
	ctx := testCtx(t)
	s, err := n.js.Stream(ctx, "test_inbound")
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
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Header.Get(jetstream.MsgIDHeader))
	}
	return ids
}

// otherThread adds a thread in the fake's channel that someone else
// opened: the adapter asks Options.KnownThread about its messages.
func (f *fakeDiscord) otherThread() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newIDLocked()
	f.chans[id] = &fakeChannel{ID: id, Type: 11, Guild: f.guild, Parent: f.channel, Owner: bob.ID, Name: "bob's"}
	return id
}

// An edge told to stop hands over every message it has read: in a thread
// whose first message waits on a lookup when the edge is stopped, the
// message read after it is stored too, not dropped with Run's context.
func TestEdgeStopStoresWhatItRead(t *testing.T) {
	f := newFake(t)
	first, second := f.otherThread(), f.otherThread()
	n := startEdgeNATS(t)
	stopping := make(chan struct{})
	asked := make(chan string, 10)
	a := f.adapter(t, Options{KnownThread: func(_ context.Context, th channels.ThreadRef) bool {
		asked <- th.Thread
		<-stopping // a lookup still under way when the edge stops
		return true
	}})
	cancel, wait := n.runEdge(t, "e1", a, edge.Options{})
	f.waitLive(testCtx(t))
	waitAsked := func(thread string) {
		t.Helper()
		select {
		case th := <-asked:
			if th != thread {
				t.Fatalf("asked about thread %s, want %s", th, thread)
			}
		case <-testCtx(t).Done():
			t.Fatalf("never asked about thread %s", thread)
		}
	}
	m1 := f.say(ann, first, "one", false)
	waitAsked(first)
	m2 := f.say(ann, first, "two", false) // waits behind m1 on the thread's lane
	m3 := f.say(ann, second, "three", false)
	waitAsked(second) // read after m2 on the same connection: m2 is read too
	cancel()          // SIGTERM
	close(stopping)
	wait()
	want := []string{"discord:" + f.channel + "/" + m1, "discord:" + f.channel + "/" + m2, "discord:" + f.channel + "/" + m3}
	got := n.stored(t)
	for _, id := range want {
		if !slices.Contains(got, id) {
			t.Errorf("message %s not stored: the stream holds %q", id, got)
		}
	}
}

// published counts an edge's publishes that were stored.
type published chan struct{}

func (p published) Published(_, result string) {
	if result == "stored" {
		p <- struct{}{}
	}
}
func (published) Performed(_, _, _ string) {}

func (p published) wait(t *testing.T, n int, what string) {
	t.Helper()
	for i := range n {
		select {
		case <-p:
		case <-testCtx(t).Done():
			t.Fatalf("%s: %d of %d events stored", what, i, n)
		}
	}
}

// Messages posted to a thread while no edge was connected (Discord does
// not send them to the next session) reach the inbound stream once the
// edge starts again, after the last one the workers handled and in their
// order, each once, and live messages after them as usual; those of a
// thread in a guild of another shard are left to that shard's edge. A
// thread not bound yet (its first prompt's worker died before the session
// was saved) is caught up on too: a worker handled a message of it.
func TestEdgeCatchesUpOnWhatItMissed(t *testing.T) {
	f := newFake(t)
	f.shard(2, 2)
	_, mine := f.addGuild(0)
	_, theirs := f.addGuild(1)
	_, unbound := f.addGuild(0)
	n := startEdgeNATS(t)
	ctx := testCtx(t)
	st, err := jsstore.Open(ctx, n.js, jsstore.Options{Cluster: "test"}) // the workers' store
	if err != nil {
		t.Fatal(err)
	}
	ref := func(thread string) channels.ThreadRef {
		c, _ := f.channelCopy(thread)
		return channels.ThreadRef{Platform: Platform, Channel: c.Parent, Thread: thread}
	}
	for _, th := range []string{mine, theirs} {
		if err := st.PutBinding(ctx, store.Binding{Thread: ref(th), Agent: "demo", SessionID: "s-" + th}); err != nil {
			t.Fatal(err)
		}
	}
	catchUp := edge.CatchUp{Window: time.Hour, Seen: func(ctx context.Context, since time.Time) ([]store.Seen, error) {
		return jsstore.SeenSince(ctx, n.js, "test", Platform, since)
	}}
	id := func(th, m string) string { return "discord:" + ref(th).Channel + "/" + m }
	shard0 := Options{Shard: Shard{ID: 0, Count: 2}}

	first := make(published, 10)
	cancel, wait := n.runEdge(t, "e1", f.adapter(t, shard0), edge.Options{CatchUp: catchUp, Observer: first})
	f.waitLive(ctx)
	m0 := f.say(ann, mine, "handled before the restart", false)
	u0 := f.say(ann, unbound, "handled, no session saved", false)
	first.wait(t, 2, "the live messages")
	t0 := f.say(ann, theirs, "handled by the other shard's edge", false)
	for _, m := range []struct{ th, id string }{{mine, m0}, {unbound, u0}, {theirs, t0}} { // a worker handled them
		if err := st.MarkSeen(ctx, ref(m.th), channels.MessageID(m.id), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wait()

	m1 := f.say(ann, mine, "sent while no edge was connected", false)
	f.say(ann, theirs, "the other shard's", false)
	m2 := f.say(bob, mine, "this one too", false)
	u1 := f.say(bob, unbound, "sent to the unbound thread meanwhile", false)
	second := make(published, 10)
	n.runEdge(t, "e2", f.adapter(t, shard0), edge.Options{CatchUp: catchUp, Observer: second})
	second.wait(t, 3, "the missed messages")
	m3 := f.say(ann, mine, "after the restart", false)
	second.wait(t, 1, "the live message after the restart")

	stored := n.stored(t)
	for _, c := range []struct {
		th   string
		want []string
	}{{mine, []string{id(mine, m0), id(mine, m1), id(mine, m2), id(mine, m3)}}, {unbound, []string{id(unbound, u0), id(unbound, u1)}}} {
		var got []string
		for _, s := range stored {
			if strings.HasPrefix(s, id(c.th, "")) {
				got = append(got, s)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("the stream holds %q of thread %s, want %q (all: %q)", got, c.th, c.want, stored)
		}
	}
	if len(stored) != 6 {
		t.Errorf("the stream holds %q, want the 6 messages of the two threads on this shard", stored)
	}
}

// A thread that received more messages while no edge was connected than
// the catch-up publishes gets none of them published, but one summary
// (Inbound.Missed) the worker tells the thread, naming the last message
// read.
func TestEdgeCatchUpSummarisesTooMany(t *testing.T) {
	f := newFake(t)
	n := startEdgeNATS(t)
	ctx := testCtx(t)
	st, err := jsstore.Open(ctx, n.js, jsstore.Options{Cluster: "test"})
	if err != nil {
		t.Fatal(err)
	}
	th := f.threadRef()
	if err := st.PutBinding(ctx, store.Binding{Thread: th, Agent: "demo", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	catchUp := edge.CatchUp{Window: time.Hour, MaxMessages: 2, Seen: func(ctx context.Context, since time.Time) ([]store.Seen, error) {
		return jsstore.SeenSince(ctx, n.js, "test", Platform, since)
	}}
	first := make(published, 10)
	cancel, wait := n.runEdge(t, "e1", f.adapter(t, Options{}), edge.Options{CatchUp: catchUp, Observer: first})
	f.waitLive(ctx)
	m0 := f.say(ann, f.thread, "handled before the restart", false)
	first.wait(t, 1, "the live message")
	if err := st.MarkSeen(ctx, th, channels.MessageID(m0), time.Now()); err != nil {
		t.Fatal(err)
	}
	cancel()
	wait()
	var last string
	for i := range 3 {
		last = f.say(ann, f.thread, fmt.Sprint("missed ", i), false)
	}
	second := make(published, 10)
	n.runEdge(t, "e2", f.adapter(t, Options{}), edge.Options{CatchUp: catchUp, Observer: second})
	second.wait(t, 1, "the summary")
	m4 := f.say(ann, f.thread, "after the restart", false)
	second.wait(t, 1, "the live message after the restart")

	evs := n.events(t)
	if len(evs) != 3 || evs[0].ID != channels.MessageID(m0) || evs[2].ID != channels.MessageID(m4) {
		t.Fatalf("the stream holds %+v, want the message before, one summary and the message after", evs)
	}
	want := channels.Missed{N: 3, Max: 2, Complete: true, Last: channels.MessageID(last)}
	if m := evs[1].Missed; m == nil || *m != want || evs[1].Thread != th {
		t.Errorf("the summary is %+v in %v, want %+v in %v", m, evs[1].Thread, want, th)
	}
}

// events decodes every event on the inbound stream, in the order stored.
func (n *edgeNATS) events(t *testing.T) []wire.Inbound {
	t.Helper()
	ctx := testCtx(t)
	s, err := n.js.Stream(ctx, "test_inbound")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var evs []wire.Inbound
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		w, err := wire.DecodeInbound(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, w)
	}
	return evs
}
