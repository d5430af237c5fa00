package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// Several workers take a thread's events in order, while another thread's
// events pass them: with the handler of thread a's first event blocked,
// thread b's events (another partition) are handled, and a's others wait.
func TestRouterPartitionsPassEachOther(t *testing.T) {
	n := startNode(t, t.TempDir())
	a := thread(0)
	b := otherPartition(a)
	blockID := "discord:" + a + "-0"
	got := make(chan handled, 100)
	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var ws []*worker
	for i := range 3 {
		id := fmt.Sprint("w", i+1)
		ws = append(ws, startRouting(t, n.ClientURL(), id, routing{ttl: time.Minute, agents: []string{"demo"},
			handle: func(ctx context.Context, ev cluster.Event) error {
				if ev.ID == blockID {
					once.Do(func() { close(blocked) })
					select {
					case <-release:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				got <- handled{id, ev}
				return nil
			}}))
	}
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // before the workers stop
	ctx := ctxFor(t)
	for _, w := range ws {
		if err := w.reg.Await(ctx, func(all []cluster.WorkerInfo) bool { return len(all) == 3 }); err != nil {
			t.Fatal(err)
		}
	}
	_, js := connect(t, n.ClientURL())
	in := openInbound(t, js)
	threads := []string{a, b}
	for i := 2; len(threads) < 8; i++ {
		threads = append(threads, thread(i))
	}
	const perThread = 5
	for _, th := range threads {
		for i := range perThread {
			ev := cluster.Event{ID: fmt.Sprintf("discord:%s-%d", th, i), Thread: th, Agent: "demo", Data: fmt.Appendf(nil, "%d", i)}
			if _, err := in.Publish(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	select {
	case <-blocked:
	case <-ctx.Done():
		t.Fatal("thread a's first event was not handled")
	}
	next := map[string]int{}
	lastSeq := map[string]uint64{}
	check := func(h handled) {
		t.Helper()
		if string(h.ev.Data) != fmt.Sprint(next[h.ev.Thread]) {
			t.Errorf("%s: event %s of its thread came after %d", h.ev.ID, h.ev.Data, next[h.ev.Thread])
		}
		next[h.ev.Thread]++
		if h.ev.Seq <= lastSeq[h.ev.Thread] {
			t.Errorf("%s: sequence %d after %d", h.ev.ID, h.ev.Seq, lastSeq[h.ev.Thread])
		}
		lastSeq[h.ev.Thread] = h.ev.Seq
		l, held, err := ws[0].leases.Holder(ctx, h.ev.Thread)
		if err != nil || !held || l.Owner != h.worker {
			t.Errorf("%s handled by %s, lease %+v held=%v err=%v", h.ev.ID, h.worker, l, held, err)
		}
	}
	// While a's handler is blocked, b's events are all handled.
	for handledB := 0; handledB < perThread; {
		h := receive(t, got)
		if h.ev.Thread == a {
			t.Fatalf("%s was handled while a's first event was still being handled", h.ev.ID)
		}
		check(h)
		if h.ev.Thread == b {
			handledB++
		}
	}
	unblock()
	for total(next) < len(threads)*perThread {
		check(receive(t, got))
	}
	for _, th := range threads {
		if next[th] != perThread {
			t.Errorf("%s: %d events handled, want %d", th, next[th], perThread)
		}
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// A stream that workers from before the partitions consumed keeps their
// one consumer of the whole stream, which a work queue takes no partition's
// consumer beside: a worker deletes it, and routes.
func TestRouterReplacesTheConsumerBeforePartitions(t *testing.T) {
	n := startNode(t, t.TempDir())
	_, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	openInbound(t, js)
	s, err := js.Stream(ctx, "test_inbound")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: cluster.Consumer, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1}); err != nil {
		t.Fatal(err)
	}
	got := make(chan handled, 1)
	w := startRouting(t, n.ClientURL(), "w1", routing{ttl: time.Minute, handle: func(_ context.Context, ev cluster.Event) error {
		got <- handled{"w1", ev}
		return nil
	}})
	select {
	case <-w.router.Ready():
	case <-ctx.Done():
		t.Fatal("the router did not start")
	}
	if _, err := openInbound(t, js).Publish(ctx, cluster.Event{ID: "web:1", Thread: thread(1), Data: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	if h := receive(t, got); string(h.ev.Data) != "hello" {
		t.Fatalf("handled %+v", h)
	}
}
