package edge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/internal/testlog"
	"github.com/nats-io/nats.go/jetstream"
)

// postsIn returns the texts rec posted in th, in order.
func postsIn(rec *channeltest.Recorder, th channels.ThreadRef) []string {
	var s []string
	for _, m := range rec.Messages() {
		if m.Thread == th {
			s = append(s, m.Text)
		}
	}
	return s
}

// With two edges of a platform, each thread's operations all reach one
// edge (so that one edge's rate-limit state counts them), the threads
// spread over both; when that edge stops, the thread's next operations
// reach the other, each once, and only once the thread's last operation
// on the stopped edge is Pace old, also by a worker that did not send
// that one (it took the thread over).
func TestThreadSticksToOneEdge(t *testing.T) {
	url := startNode(t)
	recs := map[string]*channeltest.Recorder{
		"e0": channeltest.New(channeltest.Options{}),
		"e1": channeltest.New(channeltest.Options{}),
	}
	edges := map[string]*runningEdge{}
	for _, id := range []string{"e0", "e1"} {
		edges[id] = startEdge(t, url, id, recs[id].Adapter())
	}
	nc, js := connect(t, url)
	const pace = 700 * time.Millisecond
	ctx := testCtx(t)
	// Two workers' adapters: the second takes the first thread over
	// when its edge stops, without having served it before.
	open := func() channels.Adapter {
		ra, err := remote.Open(testCtx(t), remote.Options{
			Cluster: clusterName, Platform: "test", Conn: nc, JS: js,
			Timeout: 2 * time.Second, Pace: pace, Log: testlog.FailOnError(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stopRun := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = ra.Run(runCtx, func(context.Context, channels.Inbound) {}) }()
		t.Cleanup(func() { stopRun(); <-done })
		return ra
	}
	views := []channels.Adapter{open(), open()}
	view := views[0]

	postBy := func(view channels.Adapter, th channels.ThreadRef, text string) {
		t.Helper()
		if _, err := view.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: text}); err != nil {
			t.Fatalf("post %q in %s: %v", text, th, err)
		}
	}
	post := func(th channels.ThreadRef, text string) { t.Helper(); postBy(view, th, text) }
	// where returns the edge that posted all of th's messages, failing
	// when both did.
	where := func(th channels.ThreadRef) string {
		t.Helper()
		var at string
		for id, rec := range recs {
			if len(postsIn(rec, th)) > 0 {
				if at != "" {
					t.Fatalf("%s's posts on both edges: e0 %q, e1 %q", th, postsIn(recs["e0"], th), postsIn(recs["e1"], th))
				}
				at = id
			}
		}
		return at
	}
	var threads []channels.ThreadRef
	for i := range 8 {
		threads = append(threads, recs["e0"].Thread(fmt.Sprintf("t%d", i)))
	}
	for round := range 3 {
		for _, th := range threads {
			post(th, fmt.Sprintf("%s-%d", th.Thread, round))
		}
	}
	on := map[string][]channels.ThreadRef{}
	for _, th := range threads {
		on[where(th)] = append(on[where(th)], th)
	}
	if len(on["e0"]) == 0 || len(on["e1"]) == 0 {
		t.Fatalf("the threads do not spread over both edges: %v", on)
	}

	// The edge of the first thread stops; its threads move, the other
	// edge's stay.
	th := threads[0]
	gone := where(th)
	other := map[string]string{"e0": "e1", "e1": "e0"}[gone]
	post(th, "last-on-"+gone)
	last := time.Now()
	edges[gone].stop()
	// It withdrew at once, not after its entry's TTL.
	live, err := edge.OpenLive(ctx, js, clusterName, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ent, err := live.Get(ctx, wire.LiveKey("test", gone)); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("the stopped edge %s is still in the live bucket: %v, %v", gone, ent, err)
	}
	if _, err := live.Get(ctx, wire.LiveKey("test", other)); err != nil {
		t.Errorf("the live edge %s is not in the live bucket: %v", other, err)
	}
	postBy(views[1], th, "first-on-"+other)
	if waited := time.Since(last); waited < pace {
		t.Errorf("the moved thread's first operation on %s (by another worker) came %v after its last on %s, want at least %v", other, waited, gone, pace)
	}
	post(th, "second-on-"+other)
	lastOther := time.Now()
	for _, s := range on[other] {
		post(s, "after")
	}
	want := []string{th.Thread + "-0", th.Thread + "-1", th.Thread + "-2", "last-on-" + gone}
	if got := postsIn(recs[gone], th); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s's posts on %s: %q, want %q", th, gone, got, want)
	}
	if got, want := postsIn(recs[other], th), []string{"first-on-" + other, "second-on-" + other}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s's posts on %s after the move: %q, want %q", th, other, got, want)
	}
	for _, s := range on[other] {
		if got := postsIn(recs[other], s); len(got) != 4 || got[3] != "after" {
			t.Errorf("%s, which stays on %s: %q", s, other, got)
		}
	}

	// The stopped edge starts again: the thread moves back, also for a
	// worker that starts after it (it learns when the edge started).
	back := channeltest.New(channeltest.Options{})
	startEdge(t, url, gone, back.Adapter())
	late := open()
	// A call that cannot wait that long is refused as by a rate limit,
	// and nothing is posted.
	short, cancel := context.WithTimeout(ctx, pace/10)
	_, err = late.Post(short, th, channels.Message{Kind: channels.KindText, Text: "too-soon"})
	cancel()
	if rl := (*channels.RateLimitError)(nil); !errors.As(err, &rl) || rl.RetryAfter <= 0 {
		t.Errorf("a post with too short a deadline after the move: %v, want a rate limit", err)
	}
	postBy(late, th, "back-on-"+gone)
	if waited := time.Since(lastOther); waited < pace {
		t.Errorf("the thread's first operation back on %s (by a worker started later) came %v after its last on %s, want at least %v", gone, waited, other, pace)
	}
	if got := postsIn(back, th); fmt.Sprint(got) != fmt.Sprint([]string{"back-on-" + gone}) {
		t.Errorf("%s's posts on %s started again: %q", th, gone, got)
	}
}

// Where the platform paces posts by channel (Slack), all threads of a
// channel reach one edge, whose pacing then counts them all; the channels
// spread over the edges.
func TestChannelSticksToOneEdgeWherePostsArePacedByChannel(t *testing.T) {
	url := startNode(t)
	limits := channels.Limits{PostsPacedByChannel: true}
	recs := map[string]*channeltest.Recorder{
		"e0": channeltest.New(channeltest.Options{Limits: limits}),
		"e1": channeltest.New(channeltest.Options{Limits: limits}),
	}
	for _, id := range []string{"e0", "e1"} {
		startEdge(t, url, id, recs[id].Adapter())
	}
	nc, js := connect(t, url)
	ctx := testCtx(t)
	ra, err := remote.Open(ctx, remote.Options{
		Cluster: clusterName, Platform: "test", Conn: nc, JS: js,
		Timeout: 2 * time.Second, Pace: 100 * time.Millisecond, Log: testlog.FailOnError(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = ra.Run(runCtx, func(context.Context, channels.Inbound) {}) }()
	defer func() { stopRun(); <-done }()

	byChannel := map[string]map[string]bool{} // channel → the edges that posted there
	for c := range 8 {
		for th := range 4 {
			ref := channels.ThreadRef{Platform: "test", Channel: fmt.Sprintf("c%d", c), Thread: fmt.Sprintf("t%d", th)}
			if _, err := ra.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "hello"}); err != nil {
				t.Fatalf("post in %s: %v", ref, err)
			}
			for id, rec := range recs {
				if len(postsIn(rec, ref)) > 0 {
					if byChannel[ref.Channel] == nil {
						byChannel[ref.Channel] = map[string]bool{}
					}
					byChannel[ref.Channel][id] = true
				}
			}
		}
	}
	used := map[string]bool{}
	for c, edges := range byChannel {
		if len(edges) != 1 {
			t.Errorf("the threads of %s were posted by %d edges: %v", c, len(edges), edges)
		}
		for id := range edges {
			used[id] = true
		}
	}
	if len(byChannel) != 8 || len(used) != 2 {
		t.Errorf("8 channels over edges %v (%d channels seen), want both used", used, len(byChannel))
	}
}
