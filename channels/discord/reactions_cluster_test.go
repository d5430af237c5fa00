package discord

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/internal/testlog"
)

// runWorkerRouter runs a worker's side of the inbound stream on n (the
// cluster's Router, holding every thread) until the test ends, and
// returns the events it is handed, decoded.
func (n *edgeNATS) runWorkerRouter(t *testing.T) <-chan channels.Inbound {
	t.Helper()
	leases, err := cluster.OpenLeases(testCtx(t), n.js, cluster.LeaseOptions{Cluster: "test", Owner: "w1", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan channels.Inbound, 100)
	r := cluster.NewRouter(cluster.RouterOptions{
		Cluster: "test", Conn: n.nc, Leases: leases, Inbound: n.in,
		Retry: 20 * time.Millisecond, Log: testlog.FailOnError(t),
		Handle: func(ctx context.Context, ev cluster.Event) error {
			w, err := wire.DecodeInbound(ev.Data)
			if err != nil {
				t.Errorf("event %s: %v", ev.ID, err)
				return nil
			}
			got <- w.Inbound()
			return nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := r.Run(ctx); err != nil {
			t.Errorf("cluster router: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return got
}

// In a cluster, a reaction removed and added again within the inbound
// stream's duplicate window reaches the worker each time (the real
// adapter against the fake Discord, an edge and the worker's Router on
// an embedded JetStream node), while Discord's replay of the last
// dispatch when the session resumes is dropped as the duplicate it is.
func TestClusterReactionAddedAgain(t *testing.T) {
	f := newFake(t)
	n := startEdgeNATS(t) // duplicate window 1h
	a := f.adapter(t, Options{})
	n.runEdge(t, "e1", a, edge.Options{})
	got := n.runWorkerRouter(t)
	ctx := testCtx(t)
	next := func() channels.Inbound {
		t.Helper()
		select {
		case in := <-got:
			return in
		case <-ctx.Done():
			t.Fatal("the worker was handed nothing")
		}
		return channels.Inbound{}
	}

	msg := f.say(ann, f.thread, "please", false)
	if in := next(); in.Text != "please" {
		t.Fatalf("the worker got %+v, want the message", in)
	}
	// anns returns what the worker got of Ann's reactions until Bob's
	// emoji, which follows them in the thread (its order is kept).
	anns := func(emoji string) []string {
		t.Helper()
		var out []string
		for {
			in := next()
			switch {
			case in.Reaction == nil:
				t.Fatalf("the worker got %+v, want reactions", in)
			case in.Author.ID == bob.ID && in.Reaction.Emoji == emoji:
				return out
			case in.Reaction.Removed:
				out = append(out, "remove")
			default:
				out = append(out, "add")
			}
		}
	}

	f.react(ann, f.thread, msg, channels.ReactStop, false)
	f.react(ann, f.thread, msg, channels.ReactStop, true)
	f.react(ann, f.thread, msg, channels.ReactStop, false)
	f.react(bob, f.thread, msg, "👀", false)
	if got := anns("👀"); !slices.Equal(got, []string{"add", "remove", "add"}) {
		t.Errorf("the worker got Ann's 🛑 %q, want add, remove, add", got)
	}

	// The resume replays Bob's 👀 and, before it, Ann's last add:
	// dropped, both.
	f.waitLive(ctx)
	f.replayOnResume(2)
	f.dropConnection()
	f.react(bob, f.thread, msg, "👍", false)
	if got := anns("👍"); len(got) != 0 {
		t.Errorf("after the resume the worker got reactions %q again, want the replay dropped", got)
	}
	f.mu.Lock()
	resumes := f.resumes
	f.mu.Unlock()
	if resumes != 1 {
		t.Errorf("%d resumes, want 1 (the replay is a resume's)", resumes)
	}
}
