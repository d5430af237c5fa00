package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// An event whose owner takes longer than its forwarder waits for a word
// (a stalled machine: no word within forwardSilence) is given out again
// by the stream and forwarded again while the owner still takes the first
// copy: the owner hands it to its thread once, and answers the second
// copy taken. The test is the forwarder: it sends the owner the event as
// a worker forwards it, gives up on the first request, and sends it again.
func TestForwardedAgainTakenOnce(t *testing.T) {
	n := startNode(t, t.TempDir())
	var (
		mu    sync.Mutex
		count = map[string]int{}
	)
	began, release := make(chan struct{}), make(chan struct{})
	got := make(chan handled, 10)
	owner := startRouting(t, n.ClientURL(), "w2", routing{ttl: time.Minute,
		handle: func(ctx context.Context, ev cluster.Event) error {
			mu.Lock()
			count[ev.ID]++
			firstTime := count[ev.ID] == 1
			mu.Unlock()
			if ev.ID == "web:1" && firstTime {
				close(began)
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			got <- handled{"w2", ev}
			return nil
		}})
	<-owner.router.Ready()
	nc, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	th := thread(2)
	if _, err := openInbound(t, js).Publish(ctx, cluster.Event{ID: "web:0", Thread: th}); err != nil {
		t.Fatal(err)
	}
	receive(t, got) // w2 holds the thread
	forward := func() *nats.Subscription {
		m := nats.NewMsg(fmt.Sprintf("test.worker.w2.%d", cluster.PartitionOf(th)))
		m.Header.Set(jetstream.MsgIDHeader, "web:1")
		m.Header.Set("Gateway-Thread", th)
		m.Header.Set("Gateway-Seq", "7")
		m.Reply = nc.NewInbox()
		sub, err := nc.SubscribeSync(m.Reply)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	first := forward()
	<-began
	_ = first.Unsubscribe() // the forwarder gave up on it
	second := forward()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	close(release)
	for {
		reply, err := second.NextMsgWithContext(ctx)
		if err != nil {
			t.Fatalf("no answer to the event forwarded again: %v", err)
		}
		if reply.Header.Get("Gateway-Working") != "" {
			continue
		}
		if len(reply.Data) > 0 || reply.Header.Get("Status") != "" {
			t.Fatalf("the event forwarded again not taken: %q (status %q)", reply.Data, reply.Header.Get("Status"))
		}
		break
	}
	if h := receive(t, got); h.ev.ID != "web:1" {
		t.Fatalf("handled %s, want web:1", h.ev.ID)
	}
	mu.Lock()
	defer mu.Unlock()
	if count["web:1"] != 1 {
		t.Errorf("web:1 handed to its thread %d times, want once", count["web:1"])
	}
}
