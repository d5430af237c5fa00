package jsstore_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/store"
	"github.com/nats-io/nats.go/jetstream"
)

// A mark written before marks were per prompt (keyed by its thread alone)
// is read beside the new ones, and cleared by its start, or with all of
// its thread's.
func TestLegacyRunningMark(t *testing.T) {
	n := clustertest.StartNode(t)
	s := open(t, n.ClientURL(), "gw")
	ctx := t.Context()
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "gw_running")
	if err != nil {
		t.Fatal(err)
	}
	th := channels.ThreadRef{Platform: "slack", Channel: "T1/C1", Thread: "1.2"}
	tok := func(s string) string { return "_" + base64.RawURLEncoding.EncodeToString([]byte(s)) }
	old := store.RunningTurn{Thread: th, SessionID: "s1", Started: time.UnixMilli(1000).UTC(), Prompt: store.TurnPrompt{ID: "m1", Text: "first"}}
	b, _ := json.Marshal(old)
	if _, err := kv.Put(ctx, tok(th.Platform)+"."+tok(th.Channel)+"."+tok(th.Thread), b); err != nil {
		t.Fatal(err)
	}
	next := store.RunningTurn{Thread: th, Started: time.UnixMilli(2000).UTC(), Prompt: store.TurnPrompt{ID: "m2", Text: "second"}}
	if err := s.MarkTurnRunning(ctx, next); err != nil {
		t.Fatal(err)
	}
	rs, err := s.RunningTurns(ctx)
	if err != nil || len(rs) != 2 || rs[0].Prompt.Text != "first" || rs[1].Prompt.Text != "second" {
		t.Fatalf("marks = %+v (%v), want the old one, then the new one", rs, err)
	}
	if err := s.ClearTurnRunning(ctx, th, old.Started); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.RunningTurns(ctx); len(rs) != 1 || rs[0].Prompt.Text != "second" {
		t.Fatalf("marks after clearing the old one = %+v", rs)
	}
	if _, err := kv.Put(ctx, tok(th.Platform)+"."+tok(th.Channel)+"."+tok(th.Thread), b); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearTurnRunning(ctx, th, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.RunningTurns(ctx); len(rs) != 0 {
		t.Fatalf("marks after clearing the thread's = %+v", rs)
	}
}
