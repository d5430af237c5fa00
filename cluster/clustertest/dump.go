package clustertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DumpOnFailure logs, when the test has failed, the cluster's JetStream
// state at that moment: each stream's messages and each consumer's pending,
// waiting for an ack and redelivered counts, and every key of the
// key-value buckets whose name has the cluster's prefix (the leases, the
// workers, the edges). Call it after StartNATS, so that its cleanup runs
// before the nodes stop.
func DumpOnFailure(t testing.TB, url, clusterName string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		nc, err := connect(url)
		if err != nil {
			t.Logf("dump: %v", err)
			return
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Logf("dump: %v", err)
			return
		}
		var b strings.Builder
		for name := range js.StreamNames(ctx).Name() {
			if !strings.HasPrefix(name, clusterName+"_") && !strings.HasPrefix(name, "KV_"+clusterName+"_") {
				continue
			}
			s, err := js.Stream(ctx, name)
			if err != nil {
				fmt.Fprintf(&b, "stream %s: %v\n", name, err)
				continue
			}
			info := s.CachedInfo()
			fmt.Fprintf(&b, "stream %s: %d messages (seq %d–%d)\n", name, info.State.Msgs, info.State.FirstSeq, info.State.LastSeq)
			for ci := range s.ListConsumers(ctx).Info() {
				fmt.Fprintf(&b, "  consumer %s: pending %d, ack pending %d, redelivered %d, delivered seq %d, ack floor %d\n",
					ci.Name, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.Delivered.Stream, ci.AckFloor.Stream)
			}
			if bucket, ok := strings.CutPrefix(name, "KV_"); ok {
				kv, err := js.KeyValue(ctx, bucket)
				if err != nil {
					continue
				}
				keys, _ := kv.ListKeys(ctx)
				for k := range keys.Keys() {
					if e, err := kv.Get(ctx, k); err == nil {
						fmt.Fprintf(&b, "  %s = %s (rev %d, %v ago)\n", k, e.Value(), e.Revision(), time.Since(e.Created()).Round(time.Millisecond))
					}
				}
			}
		}
		t.Logf("the cluster's JetStream at the failure:\n%s", b.String())
	})
}
