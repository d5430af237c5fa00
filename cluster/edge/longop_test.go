package edge_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/internal/testlog"
)

// slowPosts is an adapter whose posts wait for release (a post waiting
// out a rate limit, a large upload), each call told on calls first.
type slowPosts struct {
	channels.Adapter
	calls   chan struct{}
	release chan struct{}
}

func (a slowPosts) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	a.calls <- struct{}{}
	select {
	case <-a.release:
	case <-ctx.Done():
		return channels.Handle{}, ctx.Err()
	}
	return a.Adapter.Post(ctx, t, m)
}

// busyAnswers is an edge.Observer that tells of each "busy" answer.
type busyAnswers chan time.Time

func (busyAnswers) Published(string, string) {}

func (b busyAnswers) Performed(_, _, result string) {
	if result == "busy" {
		select {
		case b <- time.Now():
		default:
		}
	}
}

// An operation the edge performs for longer than Busy (the time after
// which an edge that began it is taken for dead) is performed once: the
// proxy's retries are answered "busy" all along (the performing edge
// marks it anew), and the last one with its result.
func TestOperationLongerThanBusyPerformedOnce(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{})
	ad := slowPosts{Adapter: rec.Adapter(), calls: make(chan struct{}, 10), release: make(chan struct{})}
	const busy = 300 * time.Millisecond
	busyAt := make(busyAnswers, 100)
	startEdgeWith(t, url, edge.Options{ID: "e1", Platform: "test", Adapter: ad, Busy: busy, Observer: busyAt})
	nc, js := connect(t, url)
	view := openRemote(t, nc, js) // asks again every 300ms without an answer
	th := rec.Thread("long")
	type posted struct {
		h   channels.Handle
		err error
	}
	got := make(chan posted, 1)
	go func() {
		h, err := view.Post(testCtx(t), th, channels.Message{Kind: channels.KindText, Text: "slow"})
		got <- posted{h, err}
	}()
	<-ad.calls
	began := time.Now()
	// Until a retry came well after Busy: answered busy, or performed
	// again.
	for waiting := true; waiting; {
		select {
		case at := <-busyAt:
			waiting = at.Sub(began) < 3*busy
		case <-ad.calls:
			t.Error("the operation was performed again while the first edge performed it")
			waiting = false
		case <-testCtx(t).Done():
			t.Fatal("no retry was answered")
		}
	}
	close(ad.release)
	p := <-got
	if p.err != nil {
		t.Fatal(p.err)
	}
	if ms := rec.Messages(); len(ms) != 1 || ms[0].ID != p.h.ID {
		t.Errorf("handle %+v, messages %+v: want one message, the handle's", p.h, ms)
	}
}

// An operation the proxy gave up on (no answer within GiveUp: the edge is
// still performing it) and that the lane asks again is performed once:
// the retry has the same idempotency key, is answered "busy" while the
// first is under way and then with its result.
func TestOperationRetriedAfterGiveUpPerformedOnce(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{})
	ad := slowPosts{Adapter: rec.Adapter(), calls: make(chan struct{}, 10), release: make(chan struct{})}
	busyAt := make(busyAnswers, 100)
	startEdgeWith(t, url, edge.Options{ID: "e1", Platform: "test", Adapter: ad, Observer: busyAt})
	nc, js := connect(t, url)
	view, err := remote.Open(testCtx(t), remote.Options{
		Cluster: clusterName, Platform: "test", Conn: nc, JS: js,
		Timeout: 200 * time.Millisecond, GiveUp: time.Second, Log: testlog.FailOnError(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	th := rec.Thread("retried")
	m := channels.Message{Kind: channels.KindText, Text: "once"}
	if _, err := view.Post(testCtx(t), th, m); err == nil {
		t.Fatal("the first try was answered while the edge still performs it")
	}
	<-ad.calls
	for len(busyAt) > 0 {
		<-busyAt
	}
	// The lane's retry: answered busy (the same key), or performed again.
	type posted struct {
		h   channels.Handle
		err error
	}
	got := make(chan posted, 1)
	go func() {
		h, err := view.Post(testCtx(t), th, m)
		got <- posted{h, err}
	}()
	select {
	case <-busyAt:
	case <-ad.calls:
		t.Error("the retry after the give-up was performed again")
	case <-testCtx(t).Done():
		t.Fatal("the retry was not answered")
	}
	close(ad.release)
	p := <-got
	for p.err != nil { // the retry gave up too: the lane asks again
		h, err := view.Post(testCtx(t), th, m)
		p = posted{h, err}
	}
	if ms := rec.Messages(); len(ms) != 1 || ms[0].ID != p.h.ID {
		t.Errorf("handle %+v, messages %+v: want one message, the handle's", p.h, ms)
	}
}
