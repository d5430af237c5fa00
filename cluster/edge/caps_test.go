package edge_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/edge"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/internal/testlog"
)

// withHistory adds channels.History to a recorder's adapter, keeping the
// capabilities it reports.
type withHistory struct {
	channels.Adapter // the recorder's
	channels.Editor
	channels.Typer
	channels.TypingStopper
	channels.Prompter
	channels.Uploader
	channels.Former
	channels.Reactor
	page channels.Page
}

// historyFor returns rec's adapter with History, and page as its answer.
func historyFor(rec *channeltest.Recorder, page channels.Page) withHistory {
	a := rec.Adapter()
	return withHistory{Adapter: a, Editor: a.(channels.Editor), Typer: a.(channels.Typer), TypingStopper: a.(channels.TypingStopper),
		Prompter: a.(channels.Prompter), Uploader: a.(channels.Uploader), Former: a.(channels.Former), Reactor: a.(channels.Reactor), page: page}
}

// Caps reports the recorder's, and History.
func (h withHistory) Caps() channels.Caps {
	c := channels.CapsOf(h.Adapter)
	c.History = true
	return c
}

func (h withHistory) MessagesAfter(context.Context, channels.ThreadRef, channels.MessageID, int) (channels.Page, error) {
	return h.page, nil
}

// The worker's proxy has a capability exactly where the edge's adapter
// has it, for every combination of those whose presence changes what the
// gateway does (edit, typing, prompt, upload, form, history, react): the
// gateway's channels.As and channels.CapsOf decide as they do for the
// local adapter. The proxy also checks, always: it asks its own NATS
// connection.
func TestCapabilitiesAsTheEdgeHasThem(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	for mask := range 1 << 7 {
		platform := fmt.Sprintf("p%d", mask)
		rec := channeltest.New(channeltest.Options{
			Platform: platform, React: mask&64 != 0,
			Edit: mask&1 != 0, Typing: mask&2 != 0, Prompt: mask&4 != 0, Upload: mask&8 != 0, Form: mask&16 != 0,
			Limits: channels.Limits{MaxMessageChars: 100 + mask, MaxUploadBytes: 1000},
		})
		var local channels.Adapter = rec.Adapter()
		if mask&32 != 0 {
			local = historyFor(rec, channels.Page{})
		}
		startEdgeFor(t, url, "e"+platform, platform, local)
		ra := openRemoteFor(t, nc, js, platform)
		want := channels.CapsOf(local)
		want.Check = true
		if got := channels.CapsOf(ra); got != want {
			t.Errorf("%s: the proxy has %q, the edge's adapter %q", platform, got.Names(), want.Names())
		}
		if ra.Limits() != local.Limits() {
			t.Errorf("%s: limits %+v, want %+v", platform, ra.Limits(), local.Limits())
		}
	}
}

// eventually waits until cond holds, or fails the test when the test's
// context ends first.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := testCtx(t)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within the test's time", what)
		case <-tick.C:
		}
	}
}

// An edge whose adapter gains a capability announces it anew, and so
// does an edge of another release that replaces it: the worker's proxy,
// running all along, reports what the edge has now, and performs the
// operation it refused before.
func TestWorkerSeesACapabilityAnEdgeAdds(t *testing.T) {
	url := startNode(t)
	nc, js := connect(t, url)
	rec := channeltest.New(channeltest.Options{Platform: "grow", Edit: true, Limits: channels.Limits{MaxUploadBytes: 1000}})
	first := startEdgeWith(t, url, edge.Options{ID: "e1", Platform: "grow", Adapter: rec.Adapter(), LiveTTL: 600 * time.Millisecond})
	ra := openRemoteFor(t, nc, js, "grow")
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan struct{})
	go func() { defer close(done); _ = ra.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	defer func() { cancel(); <-done }()

	th := rec.Thread("t")
	file := channels.Upload{Name: "a.txt", Data: []byte("a\n")}
	if _, ok := channels.As[channels.Uploader](ra); ok {
		t.Fatal("the proxy uploads before the edge can")
	}
	if _, err := ra.Upload(testCtx(t), th, file); !channels.IsPermanent(err) {
		t.Errorf("Upload the edge did not announce = %v, want a permanent error", err)
	}
	if got := rec.Attempts(); len(got) != 0 {
		t.Errorf("the edge was asked %+v", got)
	}

	rec.SetCaps(channels.Caps{Edit: true, Upload: true})
	eventually(t, "the worker sees the upload", func() bool { return channels.CapsOf(ra).Upload })
	if _, err := ra.Upload(testCtx(t), th, file); err != nil {
		t.Fatalf("Upload once announced: %v", err)
	}
	if ops := rec.OpsIn(th); len(ops) != 1 || ops[0].Op != "upload" {
		t.Errorf("the edge's ops %+v, want the upload", ops)
	}

	// An edge of another release takes over: forms, no uploads.
	first.stop()
	next := channeltest.New(channeltest.Options{Platform: "grow", Edit: true, Form: true})
	startEdgeFor(t, url, "e2", "grow", next.Adapter())
	eventually(t, "the worker sees the edge that replaced the first", func() bool {
		c := channels.CapsOf(ra)
		return c.Form && !c.Upload
	})
	if got, want := channels.CapsOf(ra), (channels.Caps{Edit: true, Form: true, Check: true}); got != want {
		t.Errorf("the proxy has %q, want %q", got.Names(), want.Names())
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
	startEdgeFor(t, url, "e1", "h", historyFor(rec, page))
	nc, js := connect(t, url)
	ra := openRemoteFor(t, nc, js, "h")
	got, err := ra.MessagesAfter(testCtx(t), th, "m0", 10)
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
		_ = ra.Run(ctx, func(ctx context.Context, in channels.Inbound) {
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
