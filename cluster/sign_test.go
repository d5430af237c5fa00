package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/wire"
)

func newSigner(t *testing.T) *cluster.Signer {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	s, err := cluster.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A signature covers the event's id, thread, agent and data: a change to
// any of them, another key, or none, fails.
func TestSignatureCoversTheEvent(t *testing.T) {
	edge, other := newSigner(t), newSigner(t)
	keys, err := cluster.NewEdgeKeys(edge.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	ev := cluster.Sign(edge, cluster.Event{ID: "web:local/m1", Thread: "web/local/t1", Agent: "demo", Data: []byte(`{"text":"hi"}`)})
	if err := keys.Verify(ev); err != nil {
		t.Fatalf("the edge's own event: %v", err)
	}
	byOther := cluster.Sign(other, ev)
	posing := ev
	posing.Sig = byOther.Sig // the trusted edge's name, another key's signature
	for name, c := range map[string]struct {
		ev   cluster.Event
		want error
	}{
		"unsigned":      {cluster.Event{ID: ev.ID, Thread: ev.Thread, Data: ev.Data}, cluster.ErrUnsigned},
		"another id":    {with(ev, func(e *cluster.Event) { e.ID = "web:local/m2" }), cluster.ErrBadSignature},
		"another room":  {with(ev, func(e *cluster.Event) { e.Thread = "web/local/t2" }), cluster.ErrBadSignature},
		"another agent": {with(ev, func(e *cluster.Event) { e.Agent = "codex" }), cluster.ErrBadSignature},
		"another text":  {with(ev, func(e *cluster.Event) { e.Data = []byte(`{"text":"ho"}`) }), cluster.ErrBadSignature},
		"another key":   {byOther, cluster.ErrBadSignature},
		"posing":        {posing, cluster.ErrBadSignature},
		"garbage":       {with(ev, func(e *cluster.Event) { e.Sig = "!!" }), cluster.ErrBadSignature},
	} {
		if err := keys.Verify(c.ev); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := cluster.NewEdgeKeys(); err == nil {
		t.Error("no edge key accepted")
	}
	if _, err := cluster.NewEdgeKeys("not-a-key"); err == nil {
		t.Error("a malformed edge key accepted")
	}
}

func with(ev cluster.Event, f func(*cluster.Event)) cluster.Event { f(&ev); return ev }

// errorRecords is a logger whose error records' event ids go to ch.
type errorRecords chan string

func (ch errorRecords) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (ch errorRecords) Handle(_ context.Context, r slog.Record) error {
	id := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "event" {
			id = a.Value.String()
		}
		return true
	})
	ch <- id
	return nil
}
func (ch errorRecords) WithAttrs([]slog.Attr) slog.Handler { return ch }
func (ch errorRecords) WithGroup(string) slog.Handler      { return ch }

// A worker with the edges' keys drops, with an error naming it, every
// inbound event not signed by an edge, from the stream or forwarded
// straight to it by whoever may publish there; the workers' own
// take-over events pass unsigned, and nothing else does unsigned.
func TestRouterDropsForgedEvents(t *testing.T) {
	n := startNode(t, t.TempDir())
	edge := newSigner(t)
	keys, _ := cluster.NewEdgeKeys(edge.PublicKey())
	errs := make(errorRecords, 10)
	got := make(chan handled, 10)
	w := startRouting(t, n.ClientURL(), "w1", routing{ttl: time.Minute,
		handle:   func(_ context.Context, ev cluster.Event) error { got <- handled{"w1", ev}; return nil },
		keys:     keys,
		unsigned: func(ev cluster.Event) bool { return wire.IsTakeOver(ev.Data) },
		log:      slog.New(errs),
	})
	<-w.router.Ready()
	nc, js := connect(t, n.ClientURL())
	ctx := ctxFor(t)
	open := func(s *cluster.Signer) *cluster.Inbound {
		in, err := cluster.OpenInbound(ctx, js, cluster.InboundOptions{Cluster: "test", DuplicateWindow: time.Minute, Signer: s})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	edgeIn, forger, otherEdge := open(edge), open(nil), open(newSigner(t))
	th := channels.ThreadRef{Platform: "web", Channel: "local", Thread: "t1"}
	message := func(id, text string) cluster.Event {
		data, _ := json.Marshal(wire.Inbound{Thread: th, ID: channels.MessageID(id), Author: channels.Author{ID: "ann", Name: "ann"}, Text: text})
		return cluster.Event{ID: "web:local/" + id, Thread: th.String(), Data: data}
	}
	click := func(id string) cluster.Event {
		data, _ := json.Marshal(wire.Inbound{Thread: th, ID: channels.MessageID(id), Author: channels.Author{ID: "ann", Name: "ann"},
			Choice: &channels.ChoiceAnswer{Prompt: channels.Handle{ID: "p1"}, OptionID: "allow"}})
		return cluster.Event{ID: "web:" + id, Thread: th.String(), Data: data}
	}
	wait := func(want string) {
		t.Helper()
		select {
		case id := <-errs:
			if id != want {
				t.Fatalf("an error about %q, want one about %q", id, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no error about %s", want)
		}
	}

	// Forwarded straight to the worker, as a holder of a worker's
	// credentials may.
	f := message("forwarded", "approve it")
	fm := nats.NewMsg(fmt.Sprintf("test.worker.w1.%d", cluster.PartitionOf(f.Thread)))
	fm.Header.Set(jetstream.MsgIDHeader, f.ID)
	fm.Header.Set("Gateway-Thread", f.Thread)
	fm.Data = f.Data
	if _, err := nc.RequestMsg(fm, time.Minute); err != nil {
		t.Fatal(err)
	}
	wait(f.ID)

	takeOver, _ := json.Marshal(wire.TakeOverEvent(th, time.Now(), 1, time.Now()))
	forgedTakeOver := message("takeover-posing", "a message sent as a take-over")
	forgedTakeOver.TakeOver = true
	for _, c := range []struct {
		in *cluster.Inbound
		ev cluster.Event
	}{
		{forger, message("unsigned", "approve it")},
		{forger, click("unsigned-click")},
		{otherEdge, message("other-key", "approve it")},
		{otherEdge, click("other-key-click")},
		{forger, forgedTakeOver},
		{forger, cluster.Event{ID: "takeover-1", Thread: th.String(), Data: takeOver, TakeOver: true}},
		{edgeIn, message("real", "hello")},
	} {
		if _, err := c.in.Publish(ctx, c.ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"web:local/unsigned", "web:unsigned-click", "web:local/other-key", "web:other-key-click", "web:local/takeover-posing"} {
		wait(id)
	}
	for _, want := range []string{"takeover-1", "web:local/real"} {
		h := receive(t, got)
		if h.ev.ID != want {
			t.Fatalf("handled %s, want %s", h.ev.ID, want)
		}
	}
	if len(got) != 0 || len(errs) != 0 {
		t.Errorf("%d more events handled, %d more errors", len(got), len(errs))
	}
}
