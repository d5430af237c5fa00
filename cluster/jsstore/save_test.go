package jsstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/store"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// openConn is open, also returning the store's connection.
func openConn(t *testing.T, url, name string) (*jsstore.Store, *nats.Conn) {
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
	return s, nc
}

// A worker that dies in the middle of saving a turn's entries (a save
// larger than a message, its first part sent and flushed to the server,
// then its connection gone) leaves none of them: another worker reads
// the transcript as it was before the save, and saving it again gives it
// whole.
func TestSaveEntriesCrashMidSave(t *testing.T) {
	n := clustertest.StartNode(t)
	ctx := t.Context()
	at := time.UnixMilli(1_700_000_000_000).UTC()
	dying, nc := openConn(t, n.ClientURL(), "gw")
	first := scaleEntries(0, at)
	if err := dying.SaveEntries(ctx, "s", first); err != nil {
		t.Fatal(err)
	}
	// Long answers: together more than a message may hold.
	long := strings.Repeat("All tests pass. ", int(nc.MaxPayload())/16/3+1)
	var second []store.Entry
	for i := range 4 {
		second = append(second, store.Entry{Seq: 3 + i, Time: at, Updated: at, Body: store.Message{Role: store.RoleAssistant, Text: long}})
	}
	crash := errors.New("the worker died")
	crashed := false
	jsstore.SetPartHook(dying, func(int) error {
		if err := nc.Flush(); err != nil { // the server has the first part
			t.Error(err)
		}
		nc.Close()
		crashed = true
		return crash
	})
	if err := dying.SaveEntries(ctx, "s", second); !errors.Is(err, crash) || !crashed {
		t.Fatalf("SaveEntries with a crash mid-save = %v (crashed: %v), want the crash", err, crashed)
	}

	other := open(t, n.ClientURL(), "gw")
	got, err := other.Entries(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Fatalf("entries after a crash mid-save (-want the first save only +got):\n%s", diff)
	}
	if err := other.SaveEntries(ctx, "s", second); err != nil {
		t.Fatal(err)
	}
	got, err = other.Entries(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(first, second...), got); diff != "" {
		t.Fatalf("entries after saving again (-want +got):\n%s", diff)
	}
}
