package slack

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// TestSocketsShareEventsOnce runs two adapters as two edges sharing the
// app's Socket Mode connections, each publishing what it delivers to the
// cluster's inbound stream on an embedded JetStream node with the event
// id as Nats-Msg-Id. The fake hands each event to one connection at
// random; the first connection's acks do not reach it in time, so Slack
// sends those events again, some to the other edge. Every event is in
// the stream exactly once. The adapters acknowledge before their handler
// runs: the handlers wait until the fake has every ack.
func TestSocketsShareEventsOnce(t *testing.T) {
	ctx := testCtx(t)
	f := newFake(t, fakeOptions{sockets: true})
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

	type published struct {
		edge      int
		event     string
		duplicate bool
	}
	pubs := make(chan published, 100)
	gate := make(chan struct{}) // closed once the fake heard (or holds) every ack
	edge := func(i int) func(context.Context, channels.Inbound) {
		return func(ctx context.Context, m channels.Inbound) {
			select {
			case <-gate:
			case <-ctx.Done():
				return
			}
			if m.Event == "" {
				t.Errorf("edge %d: inbound %q without an event id", i, m.Text)
				return
			}
			dup, err := in.Publish(ctx, cluster.Event{ID: "slack:" + m.Event, Thread: m.Thread.Channel + "/" + m.Thread.Thread, Data: []byte(m.Text)})
			if err != nil {
				t.Errorf("edge %d: publish: %v", i, err)
				return
			}
			pubs <- published{i, m.Event, dup}
		}
	}
	runEdges(t, f, edge(0), edge(1))
	f.holdAcks(0) // the first edge is slow to acknowledge

	const n = 12
	var events []string
	for i := range n {
		s := f.mustSay(ctx, sayOptions{user: "U0ANN", channel: "D0DM", kind: "im", text: fmt.Sprint("message ", i)})
		events = append(events, s.eventIDs...)
	}
	if f.sentTo(0) == 0 || f.sentTo(1) == 0 {
		t.Fatalf("events sent to the edges: %d and %d; want some to each", f.sentTo(0), f.sentTo(1))
	}
	// The handlers wait at the gate: the acks cannot wait for them.
	waitAcks := func(ids []string) {
		t.Helper()
		err := f.waitFor(ctx, "every ack", func() bool {
			heard := 0
			for _, id := range ids {
				if _, ok := f.acks[id]; ok {
					heard++
				}
			}
			for _, late := range f.sockets.late {
				for _, id := range late {
					if slices.Contains(ids, id) {
						heard++
					}
				}
			}
			return heard == len(ids)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var envelopes []string
	for _, s := range f.sockets.sent {
		envelopes = append(envelopes, s.id)
	}
	waitAcks(envelopes)
	close(gate)

	next := func() published {
		t.Helper()
		select {
		case p := <-pubs:
			return p
		case <-ctx.Done():
			t.Fatal("an event was not published")
			return published{}
		}
	}
	got := map[string]int{} // event id → publishes that stored it
	for range n {
		p := next()
		if p.duplicate {
			t.Errorf("edge %d: first delivery of %s was a duplicate", p.edge, p.event)
		}
		got[p.event]++
	}
	// Slack's 3 s pass: what the first edge acknowledged is sent again.
	slow := f.sentTo(0)
	retries, err := f.redeliverUnacked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(retries) != slow {
		t.Errorf("%d envelopes redelivered, want the %d the first edge got", len(retries), slow)
	}
	waitAcks(retries)
	toOther := 0 // retries that reached the second edge, which delivers them again
	f.mu.Lock()
	for _, s := range f.sockets.sent {
		if slices.Contains(retries, s.id) && s.conn == f.sockets.open[1] {
			toOther++
		}
	}
	f.mu.Unlock()
	if toOther == 0 {
		t.Fatal("no redelivery reached the second edge; the test proves nothing")
	}
	for range toOther {
		p := next()
		if !p.duplicate || p.edge != 1 {
			t.Errorf("redelivery of %s published by edge %d, duplicate %v; want edge 1 and a duplicate", p.event, p.edge, p.duplicate)
		}
		got[p.event]++
	}

	// The stream holds each event once.
	st, err := js.Stream(ctx, "test_inbound")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, m.Header.Get(jetstream.MsgIDHeader))
	}
	var want []string
	for _, e := range events {
		want = append(want, "slack:"+e)
	}
	slices.Sort(stored)
	slices.Sort(want)
	if !slices.Equal(stored, want) {
		t.Errorf("stream holds %q, want each event once: %q", stored, want)
	}
	if len(got) != n {
		t.Errorf("%d events published, want %d", len(got), n)
	}
}

// runEdges runs an adapter per handler, each with its own Socket Mode
// connection (the i-th open connection is the i-th adapter's), until the
// test ends; then it stops them all and checks that no goroutine is left.
func runEdges(t *testing.T, f *fakeSlack, hs ...func(context.Context, channels.Inbound)) {
	t.Helper()
	leaks := channeltest.LeakCheck(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, len(hs))
	t.Cleanup(func() {
		cancel()
		for range hs {
			if err := <-done; err != nil {
				t.Errorf("Run = %v, want nil after its context ended", err)
			}
		}
		leaks()
	})
	for i, h := range hs {
		a := f.adapter(t, Options{})
		go func() { done <- a.Run(ctx, h) }()
		if err := f.waitFor(testCtx(t), "the edge's socket", func() bool { return len(f.sockets.open) == i+1 }); err != nil {
			t.Fatal(err)
		}
	}
}
