package edge_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/internal/testlog"
)

// structural reports which of the capabilities whose presence changes
// what the gateway does a has.
func structural(a channels.Adapter) []string {
	var out []string
	if _, ok := a.(channels.Editor); ok {
		out = append(out, "edit")
	}
	if _, ok := a.(channels.Typer); ok {
		out = append(out, "typing")
	}
	if _, ok := a.(channels.Prompter); ok {
		out = append(out, "prompt")
	}
	if _, ok := a.(channels.Uploader); ok {
		out = append(out, "upload")
	}
	if _, ok := a.(channels.Former); ok {
		out = append(out, "form")
	}
	if _, ok := a.(channels.History); ok {
		out = append(out, "history")
	}
	if _, ok := a.(channels.Reactor); ok {
		out = append(out, "react")
	}
	return out
}

// withHistory adds channels.History to an adapter.
type withHistory struct {
	channels.Adapter
	page channels.Page
}

func (h withHistory) MessagesAfter(context.Context, channels.ThreadRef, channels.MessageID, int) (channels.Page, error) {
	return h.page, nil
}

// The worker's proxy has a capability exactly where the edge's adapter
// has it, for every combination: the gateway's type assertions (and
// dispatch's view of them) decide as they do for the local adapter.
func TestCapabilitiesAsTheEdgeHasThem(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	for mask := range 1 << 7 {
		react := mask&64 != 0
		if react && (mask&7 != 7 || mask&16 != 0) {
			continue // the recorder reacts only with edits, typing and prompts, and no forms
		}
		platform := fmt.Sprintf("p%d", mask)
		rec := channeltest.New(channeltest.Options{
			Platform: platform, React: react,
			Edit: mask&1 != 0, Typing: mask&2 != 0, Prompt: mask&4 != 0, Upload: mask&8 != 0, Form: mask&16 != 0,
			Limits: channels.Limits{MaxMessageChars: 100 + mask, MaxUploadBytes: 1000},
		})
		var local channels.Adapter = rec.Adapter()
		if mask&32 != 0 {
			local = withHistory{Adapter: local}
		}
		startEdgeFor(t, url, "e"+platform, platform, local)
		_, view := openRemoteFor(t, nc, js, platform)
		if got, want := structural(view), structural(local); !slices.Equal(got, want) {
			t.Errorf("%s: the proxy has %v, the edge's adapter %v", platform, got, want)
		}
		if got, want := dispatch.Capabilities(view), dispatch.Capabilities(local); !slices.Equal(got, want) {
			t.Errorf("%s: dispatch sees %v through the proxy, %v locally", platform, got, want)
		}
		if view.Limits() != local.Limits() {
			t.Errorf("%s: limits %+v, want %+v", platform, view.Limits(), local.Limits())
		}
	}
}

// A page of history crosses with its events, and an event's callback
// (Reply) is answered by the edge that took it.
func TestHistoryAndCallbacksCross(t *testing.T) {
	url := startNode(t)
	rec := channeltest.New(channeltest.Options{Platform: "h"})
	th := rec.Thread("t")
	replied := make(chan string, 1)
	page := channels.Page{Last: "m2", More: true, Messages: []channels.Inbound{
		{Thread: th, Author: ann, Text: "while you were away", ID: "m1", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Thread: th, Author: ann, Text: "/stop", ID: "m2", Command: &channels.Command{Name: "stop"},
			Reply: func(_ context.Context, s string) error { replied <- s; return nil }},
	}}
	startEdgeFor(t, url, "e1", "h", withHistory{Adapter: rec.Adapter(), page: page})
	nc, js := connect(t, url)
	ra, view := openRemoteFor(t, nc, js, "h")
	got, err := view.(channels.History).MessagesAfter(testCtx(t), th, "m0", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.Last != page.Last || !got.More || len(got.Messages) != 2 {
		t.Fatalf("page %+v", got)
	}
	for i, m := range got.Messages {
		want := page.Messages[i]
		want.Reply = nil
		m.Reply = nil
		if !reflect.DeepEqual(m, want) {
			t.Errorf("message %d: %+v, want %+v", i, m, want)
		}
	}
	if got.Messages[0].Reply != nil || got.Messages[1].Reply == nil {
		t.Fatal("the callbacks did not cross as they were")
	}
	if err := got.Messages[1].Reply(testCtx(t), "only you see this"); err != nil {
		t.Fatal(err)
	}
	if s := <-replied; s != "only you see this" {
		t.Errorf("the edge replied %q", s)
	}

	// A live event's callback, through the cluster's router.
	leases, err := cluster.OpenLeases(testCtx(t), js, cluster.LeaseOptions{Cluster: clusterName, Owner: "w1", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cr := cluster.NewRouter(cluster.RouterOptions{Cluster: clusterName, Conn: nc, Leases: leases,
		Inbound: openInbound(t, js), Handle: remote.Handler(ra), Log: testlog.FailOnError(t)})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() { _ = cr.Run(ctx) })
	errs := make(chan error, 1)
	wg.Go(func() {
		_ = view.Run(ctx, func(ctx context.Context, in channels.Inbound) {
			if in.Reply == nil {
				errs <- fmt.Errorf("event %s without its Reply", in.ID)
				return
			}
			errs <- in.Reply(ctx, "hello "+in.Author.Name)
		})
	})
	if err := rec.Deliver(testCtx(t), channels.Inbound{Thread: th, Author: ann, Text: "hi", ID: "live1",
		Reply: func(_ context.Context, s string) error { replied <- s; return nil }}); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if s := <-replied; s != "hello Ann" {
		t.Errorf("the edge replied %q", s)
	}
}
