package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/nats-io/nats.go"
)

// A platform's redelivery of an event (same id) reaches no worker: the
// inbound stream's duplicate window drops it, and the prompt is answered
// once.
func TestDuplicateInboundAnsweredOnce(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	startEdge(t, url, "e1", rec.Adapter())
	w := startWorker(t, url)
	th := rec.Thread("dup")
	in := channels.Inbound{Thread: th, Author: ann, Text: "echo once", ID: "m1"}
	for range 2 {
		if err := rec.Deliver(testCtx(t), in); err != nil {
			t.Fatal(err)
		}
	}
	w.waitEnd(t, th, rec)
	// A later event of the thread comes after the duplicate in the
	// stream: once it is answered, the duplicate would have been too.
	if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: th, Author: ann, Text: "echo twice", ID: "m2"}); err != nil {
		t.Fatal(err)
	}
	w.waitEnd(t, th, rec)
	if got := text(rec, th); got != "oncetwice" {
		t.Errorf("delivered %q, want %q", got, "oncetwice")
	}
	if n := w.handled.Load(); n != 2 {
		t.Errorf("the worker was handed %d events, want 2 (the duplicate dropped)", n)
	}
}

// An operation whose answer was lost is asked again with the same key and
// answered with the first result: the answer is posted once.
func TestLostReplyPerformedOnce(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	e := startEdge(t, url, "e1", rec.Adapter())
	w := startWorker(t, url)
	dropped := make(chan struct{}, 1)
	e.e.DropReplies(1, dropped)
	th := rec.Thread("lost")
	if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: th, Author: ann, Text: "echo posted once", ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	w.waitEnd(t, th, rec)
	select {
	case <-dropped:
	default:
		t.Fatal("no reply was dropped")
	}
	if got := text(rec, th); got != "posted once" {
		t.Errorf("delivered %q, want %q; ops %v", got, "posted once", rec.OpsIn(th))
	}
	posts := 0
	for _, op := range rec.Attempts() {
		if op.Op == "send" {
			posts++
		}
	}
	if posts != 1 {
		t.Errorf("%d posts reached the platform, want 1: %v", posts, rec.Attempts())
	}
}

// The proxy's retry of an operation reaches a new edge (the first one
// performed it, lost its reply and was restarted): the new edge answers
// from the results bucket, with the same handle, and posts nothing.
func TestEdgeRestartStillDedupes(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	e1 := startEdge(t, url, "e1", rec.Adapter())
	dropped := make(chan struct{}, 1)
	e1.e.DropReplies(1, dropped)
	nc, js := connect(t, url)
	view := openRemote(t, nc, js)
	th := rec.Thread("restart")
	type posted struct {
		h   channels.Handle
		err error
	}
	got := make(chan posted, 1)
	go func() {
		h, err := view.Post(testCtx(t), th, channels.Message{Kind: channels.KindText, Text: "hello"})
		got <- posted{h, err}
	}()
	select {
	case <-dropped:
	case <-testCtx(t).Done():
		t.Fatal("the edge never answered")
	}
	e1.stop()
	startEdge(t, url, "e2", rec.Adapter())
	var p posted
	select {
	case p = <-got:
	case <-testCtx(t).Done():
		t.Fatal("the post was never answered")
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	ms := rec.Messages()
	if len(ms) != 1 || ms[0].ID != p.h.ID || p.h.Thread != th {
		t.Fatalf("handle %+v, messages %+v: want one message, the handle's", p.h, ms)
	}
	if err := view.Edit(testCtx(t), p.h, channels.Message{Kind: channels.KindText, Text: "hello again"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := rec.Message(p.h.ID); m.Text != "hello again" {
		t.Errorf("the edit through the new edge reached %q", m.Text)
	}
}

// The same key asked twice, of two edges, is performed once; another key
// is another operation.
func TestSameKeySameResult(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{})
	startEdge(t, url, "e1", rec.Adapter())
	startEdge(t, url, "e2", rec.Adapter())
	nc, _ := connect(t, url)
	th := rec.Thread("k")
	ask := func(key string) wire.Result {
		t.Helper()
		b, _ := json.Marshal(wire.Op{Key: key, Op: wire.OpPost, Thread: th, Message: &channels.Message{Kind: channels.KindText, Text: key}})
		m, err := nc.RequestWithContext(testCtx(t), wire.OpsSubject(clusterName, "test"), b)
		if err != nil {
			t.Fatal(err)
		}
		r, err := wire.DecodeResult(m.Data)
		if err != nil || r.Err != nil {
			t.Fatalf("%v %+v", err, r.Err)
		}
		return r
	}
	first := ask("k1")
	for range 5 {
		if again := ask("k1"); !reflect.DeepEqual(again, first) {
			t.Fatalf("the repeat got %+v, the first %+v", again, first)
		}
	}
	if other := ask("k2"); other.Handle == first.Handle {
		t.Fatal("another key got the first key's message")
	}
	if n := len(rec.Messages()); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
}

// An edge's platform error comes back as the error kind the lane
// understands.
func TestErrorsCrossAsTheirKind(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	startEdge(t, url, "e1", rec.Adapter())
	nc, js := connect(t, url)
	view := openRemote(t, nc, js)
	th := rec.Thread("err")
	rec.Inject(channeltest.InjectPost, &channels.RateLimitError{RetryAfter: 1500 * time.Millisecond, Scope: "post"})
	_, err := view.Post(testCtx(t), th, channels.Message{Kind: channels.KindText, Text: "x"})
	var rl *channels.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 1500*time.Millisecond || rl.Scope != "post" {
		t.Errorf("a rate limit came back as %#v", err)
	}
	rec.Inject(channeltest.InjectPost, channels.Permanent(errors.New("unknown channel")))
	if _, err := view.Post(testCtx(t), th, channels.Message{Kind: channels.KindText, Text: "x"}); !channels.IsPermanent(err) {
		t.Errorf("a permanent error came back as %#v", err)
	}
	rec.Inject(channeltest.InjectEdit, errors.Join(errors.New("deleted"), channels.ErrMessageGone))
	if err := view.Edit(testCtx(t), channels.Handle{Thread: th, ID: "1"}, channels.Message{Kind: channels.KindText, Text: "x"}); !errors.Is(err, channels.ErrMessageGone) {
		t.Errorf("a gone message came back as %#v", err)
	}
	rec.Inject(channeltest.InjectPost, errors.New("connection reset"))
	if _, err := view.Post(testCtx(t), th, channels.Message{Kind: channels.KindText, Text: "x"}); err == nil || channels.IsPermanent(err) || errors.As(err, &rl) {
		t.Errorf("an outage came back as %#v", err)
	}
}

// request sends op to the platform's edges and returns their answer.
func request(ctx context.Context, nc *nats.Conn, op wire.Op) (wire.Result, error) {
	b, _ := json.Marshal(op)
	m, err := nc.RequestWithContext(ctx, wire.OpsSubject(clusterName, "test"), b)
	if err != nil {
		return wire.Result{}, err
	}
	return wire.DecodeResult(m.Data)
}

// ask is request for the test's goroutine.
func ask(t *testing.T, nc *nats.Conn, op wire.Op) wire.Result {
	t.Helper()
	r, err := request(testCtx(t), nc, op)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Many asking the same key at once, of two edges, get one result: the
// one performing it answers, the others hear "busy" until it is recorded.
func TestSameKeyAtOnce(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{})
	startEdge(t, url, "e1", rec.Adapter())
	startEdge(t, url, "e2", rec.Adapter())
	nc, _ := connect(t, url)
	op := wire.Op{Key: "same", Op: wire.OpPost, Thread: rec.Thread("c"), Message: &channels.Message{Kind: channels.KindText, Text: "once"}}
	results := make(chan wire.Result, 10)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for {
				r, err := request(ctx, nc, op)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Err == nil || r.Err.Kind != wire.ErrBusy {
					results <- r
					return
				}
				select {
				case <-ctx.Done():
					t.Error("still busy")
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		})
	}
	wg.Wait()
	close(results)
	var first *wire.Result
	for r := range results {
		if r.Err != nil {
			t.Fatalf("error %+v", r.Err)
		}
		if first == nil {
			first = &r
		} else if r.Handle != first.Handle {
			t.Fatalf("handles %v and %v for one key", r.Handle, first.Handle)
		}
	}
	if n := len(rec.Messages()); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}

// An operation begun by an edge that never recorded its result blocks a
// repeat while it may still be under way, and is performed again once
// that edge must have died.
func TestUnfinishedOperationTakenOver(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{})
	startEdge(t, url, "e1", rec.Adapter())
	nc, js := connect(t, url)
	kv, err := js.KeyValue(testCtx(t), wire.OpsBucket(clusterName))
	if err != nil {
		t.Fatal(err)
	}
	pending := func(key string, began time.Time) {
		b, _ := json.Marshal(map[string]any{"edge": "dead", "began": began})
		if _, err := kv.Put(testCtx(t), "test."+key, b); err != nil {
			t.Fatal(err)
		}
	}
	th := rec.Thread("c")
	pending("fresh", time.Now())
	if r := ask(t, nc, wire.Op{Key: "fresh", Op: wire.OpPost, Thread: th, Message: &channels.Message{Kind: channels.KindText, Text: "x"}}); r.Err == nil || r.Err.Kind != wire.ErrBusy {
		t.Fatalf("an operation under way elsewhere was answered %+v", r)
	}
	pending("stale", time.Now().Add(-time.Hour))
	r := ask(t, nc, wire.Op{Key: "stale", Op: wire.OpPost, Thread: th, Message: &channels.Message{Kind: channels.KindText, Text: "y"}})
	if r.Err != nil || !r.Handle.Known() {
		t.Fatalf("a dead edge's operation was answered %+v", r)
	}
	if ms := rec.Messages(); len(ms) != 1 || ms[0].Text != "y" {
		t.Fatalf("messages %+v", ms)
	}
}
