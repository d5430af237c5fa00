package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go/jetstream"
)

// A session's frames in the cluster's event log stream replay exactly as
// the same frames from a file.
func TestReplayFromCluster(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: n.ClientURL()}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// Another cluster name on the same NATS: its log is not read.
	for _, name := range []string{"team", "gateway"} {
		l, err := jsstore.OpenEventLog(t.Context(), js, jsstore.EventLogOptions{Cluster: name, MaxAge: time.Hour, MaxBytes: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(stream)
		if err != nil {
			t.Fatal(err)
		}
		w, other := l.Writer("sess-1"), l.Writer("sess-2")
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for i := 0; sc.Scan(); i++ {
			line := sc.Bytes()
			if name == "team" {
				line = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`)
			}
			if err := w.Write(line); err != nil {
				t.Fatal(err)
			}
			if i%4 == 0 { // another session's frames in between
				if err := other.Write([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess-2"}}`)); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want, stderr, err := runCLI(t, "", "replay", "--limits", "discord", "--summary", stream)
	if err != nil {
		t.Fatalf("replay of the file: %v\n%s", err, stderr)
	}
	got, stderr, err := runCLI(t, "", "replay", "--limits", "discord", "--summary", "--nats", n.ClientURL(), "--session", "sess-1")
	if err != nil {
		t.Fatalf("replay from the cluster: %v\n%s", err, stderr)
	}
	if got != want {
		t.Fatalf("replay from the cluster differs from the file's:\n--- cluster\n%s\n--- file\n%s", got, want)
	}
	if len(strings.Split(want, "\n")) < 5 {
		t.Fatalf("the replay printed too little to compare: %q", want)
	}
	// cluster.nats.url is the default NATS.
	viaConfig, _, err := runCLI(t, "", "replay", "--limits", "discord", "--summary", "--set", "cluster.nats.url="+n.ClientURL(), "--session", "sess-1")
	if err != nil || viaConfig != want {
		t.Fatalf("replay with cluster.nats.url: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--nats", n.ClientURL(), "--session", "nope"}, `no frame of session "nope"`},
		{[]string{"replay", "--session", "sess-1"}, "--nats URL or cluster.nats.url"},
		{[]string{"replay", "--nats", n.ClientURL(), stream}, "--nats goes with --session"},
		{[]string{"replay", "--nats", n.ClientURL(), "--session", "sess-1", stream}, "give one or the other"},
		{[]string{"replay", "--set", "cluster.name=absent", "--nats", n.ClientURL(), "--session", "sess-1"}, "absent_events"},
	} {
		if _, _, err := runCLI(t, "", c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
