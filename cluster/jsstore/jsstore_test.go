package jsstore_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/store/storetest"
	"github.com/nats-io/nats.go/jetstream"
)

// open opens a store of the cluster name on its own connection (as a
// worker would); it closes with the test.
func open(t testing.TB, url, name string) *jsstore.Store {
	t.Helper()
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := jsstore.Open(ctx, js, jsstore.Options{Cluster: name})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	n := clustertest.StartNode(t)
	var clusters atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Backend {
		// A cluster name per test: its own buckets and streams, empty.
		return open(t, n.ClientURL(), fmt.Sprintf("c%d", clusters.Add(1)))
	})
}

// Two workers, each with its own connection and store, resolve one
// prompt at once, many times over: exactly one wins each time.
func TestResolveAcrossWorkers(t *testing.T) {
	n := clustertest.StartNode(t)
	a, b := open(t, n.ClientURL(), "gw"), open(t, n.ClientURL(), "gw")
	ctx := t.Context()
	for i := range 20 {
		id := fmt.Sprint("p", i)
		if err := a.AddPrompt(ctx, store.Prompt{ID: id, SessionID: "s"}); err != nil {
			t.Fatal(err)
		}
		storetest.ResolveRace(t, ctx, []store.Backend{a, b, a, b}, id)
	}
}

// What one worker writes, another reads: the data is the cluster's.
func TestSharedAcrossWorkers(t *testing.T) {
	n := clustertest.StartNode(t)
	a, b := open(t, n.ClientURL(), "gw"), open(t, n.ClientURL(), "gw")
	other := open(t, n.ClientURL(), "other")
	ctx := t.Context()
	th := store.Binding{SessionID: "s1", Agent: "demo"}
	th.Thread.Platform, th.Thread.Channel, th.Thread.Thread = "slack", "T1/C1", "1.2"
	if err := a.PutBinding(ctx, th); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Binding(ctx, th.Thread); err != nil || !ok || got.SessionID != "s1" {
		t.Fatalf("the other worker reads %+v %v %v", got, ok, err)
	}
	if _, ok, err := other.Binding(ctx, th.Thread); err != nil || ok {
		t.Fatalf("another gateway cluster on the same NATS reads the binding: %v %v", ok, err)
	}
}

// A transcript entry larger than the server's maximum payload (a tool's
// long output) is stored in parts and read back whole.
func TestLargeEntry(t *testing.T) {
	n := clustertest.StartNode(t)
	s := open(t, n.ClientURL(), "gw")
	ctx := t.Context()
	text := strings.Repeat("long output line\n", 150_000) // 2.5 MB
	es := []store.Entry{
		{Seq: 0, Body: store.Message{Role: store.RoleUser, Text: "go"}},
		{Seq: 1, Body: store.Message{Role: store.RoleAssistant, Text: text, Length: len(text)}},
		{Seq: 2, Body: store.Thought{Text: "done"}},
	}
	if err := s.SaveEntries(ctx, "s", es); err != nil {
		t.Fatal(err)
	}
	got, err := s.Entries(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, es) {
		t.Fatalf("read %d entries back, not the %d saved", len(got), len(es))
	}
}
