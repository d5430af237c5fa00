package edge_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/internal/testlog"
)

// counts is an edge.Observer that counts what it is told.
type counts struct {
	mu        sync.Mutex
	published map[string]int // platform/result
	performed map[string]int // platform/op/result
}

func (c *counts) Published(platform, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published[platform+"/"+result]++
}

func (c *counts) Performed(platform, op, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.performed[platform+"/"+op+"/"+result]++
}

// The Observer is told of each publish (a platform's redelivery as a
// duplicate) and of each operation answered: performed, or answered with
// the result of an earlier try whose reply was lost.
func TestObserverCounts(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Edit: true})
	c := &counts{published: map[string]int{}, performed: map[string]int{}}
	nc, js := connect(t, url)
	e, err := edge.New(testCtx(t), edge.Options{
		Cluster: clusterName, ID: "e1", Platform: "test", Adapter: rec.Adapter(),
		Conn: nc, JS: js, Inbound: openInbound(t, js), Log: testlog.FailOnError(t), Observer: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("edge: %v", err)
		}
	})
	<-e.Ready()
	w := startWorker(t, url)
	dropped := make(chan struct{}, 1)
	e.DropReplies(1, dropped)

	th := rec.Thread("counted")
	in := channels.Inbound{Thread: th, Author: ann, Text: "echo counted", ID: "m1"}
	for range 2 {
		if err := rec.Deliver(testCtx(t), in); err != nil {
			t.Fatal(err)
		}
	}
	w.waitEnd(t, th, rec)
	<-dropped
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.published["test/stored"] != 1 || c.published["test/duplicate"] != 1 {
		t.Errorf("published %v, want the event stored once and its redelivery a duplicate", c.published)
	}
	dedup, sends := 0, 0
	for k, n := range c.performed {
		switch {
		case k == "test/post/ok":
			sends += n
		case strings.HasSuffix(k, "/deduplicated"):
			dedup += n
		}
	}
	if sends != 1 || dedup != 1 {
		t.Errorf("performed %v, want one post and the operation whose reply was lost answered again as deduplicated", c.performed)
	}
}
