package edge_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/internal/testlog"
)

// The worker's proxy, through an edge around the recording adapter,
// passes the adapter contract suite: to the gateway it is an adapter like
// any other. The recorder reacts or asks forms, not both: one run each,
// and one with no capability at all.
func TestRemotePassesTheContract(t *testing.T) {
	url := startNode(t)
	var n atomic.Int64
	for name, o := range map[string]channeltest.Options{
		"react": {Edit: true, Typing: true, Prompt: true, Upload: true, React: true},
		"form":  {Edit: true, Typing: true, Prompt: true, Upload: true, Form: true},
		"base":  {},
	} {
		t.Run(name, func(t *testing.T) { runContract(t, url, &n, o) })
	}
}

func runContract(t *testing.T, url string, n *atomic.Int64, o channeltest.Options) {
	channeltest.RunContract(t, func(t *testing.T) channeltest.Harness {
		platform := fmt.Sprintf("c%d", n.Add(1))
		o.Platform = platform
		o.Limits = channels.Limits{MaxMessageChars: 2000}
		if o.Upload {
			o.Limits.MaxUploadBytes = 1 << 16
		}
		rec := channeltest.New(o)
		startEdgeFor(t, url, "e"+platform, platform, rec.Adapter())
		nc, js := connect(t, url)
		ra := openRemoteFor(t, nc, js, platform)
		leases, err := cluster.OpenLeases(testCtx(t), js, cluster.LeaseOptions{Cluster: clusterName, Owner: "w" + platform, TTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		cr := cluster.NewRouter(cluster.RouterOptions{Cluster: clusterName, Conn: nc, Leases: leases,
			Inbound: openInbound(t, js), Handle: remote.Handler(ra), Retry: 20 * time.Millisecond, Log: testlog.FailOnError(t)})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = cr.Run(ctx) })
		t.Cleanup(func() { cancel(); wg.Wait() })
		select { // every partition consumed
		case <-cr.Ready():
		case <-testCtx(t).Done():
			t.Fatal("the cluster router did not start")
		}
		// One event through before the suite starts, so that the
		// cluster's consumer runs before the suite counts goroutines.
		warm := make(chan struct{})
		wctx, stopWarm := context.WithCancel(context.Background())
		t.Cleanup(stopWarm)
		warmed := make(chan struct{})
		go func() {
			defer close(warmed)
			_ = ra.Run(wctx, func(context.Context, channels.Inbound) { close(warm) })
		}()
		if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: rec.Thread("warm"), Author: ann, Text: "warm", ID: "warm"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-warm:
		case <-testCtx(t).Done():
			t.Fatal("the warm-up event never came through")
		}
		stopWarm()
		<-warmed
		thread := rec.Thread("contract")
		var inbound atomic.Int64
		return channeltest.Harness{
			Adapter: ra,
			Thread:  thread,
			Inject: func(ctx context.Context, a channels.Author, text string) error {
				id := channels.MessageID(fmt.Sprintf("in%d", inbound.Add(1)))
				return rec.Deliver(ctx, channels.Inbound{Thread: thread, Author: a, Text: text, ID: id})
			},
			Click:      rec.Click,
			AnswerForm: rec.AnswerForm,
			Seen: func(_ context.Context, id channels.MessageID) (string, error) {
				m, ok := rec.Message(id)
				if !ok {
					return "", fmt.Errorf("seen %q: %w", id, channels.ErrMessageGone)
				}
				// The recorder keeps what dispatch sent; a person sees it
				// as the platforms' adapters show it.
				return channels.TrimLead(m.Text), nil
			},
			TypingShown: func(context.Context) (bool, error) { return rec.TypingShown(thread), nil },
			SeenUpload: func(_ context.Context, h channels.Handle) (channels.Upload, error) {
				m, ok := rec.Message(h.ID)
				if !ok || m.File == nil {
					return channels.Upload{}, fmt.Errorf("seen upload %q: no file", h.ID)
				}
				f := *m.File
				f.ContentType = f.Type()
				return f, nil
			},
			Reactions: func(_ context.Context, h channels.Handle) ([]string, error) { return rec.Reactions(h.ID), nil },
			React: func(ctx context.Context, a channels.Author, h channels.Handle, emoji string) error {
				id := channels.MessageID(fmt.Sprintf("in%d", inbound.Add(1)))
				return rec.Deliver(ctx, channels.Inbound{Thread: h.Thread, Author: a, ID: id, Reaction: &channels.Reaction{Message: h.ID, Emoji: emoji}})
			},
		}
	})
}
