package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsauth"
	"github.com/nats-io/nats.go/jetstream"
)

// gateway nats serves JetStream until its context ends, and a restart on
// the same store keeps what was stored.
func TestNATSCommand(t *testing.T) {
	dir := t.TempDir()
	for round, want := range []string{"", "kept"} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"nats", "--store", dir, "--listen", "127.0.0.1:0"}, strings.NewReader(""), pw, io.Discard)
			pw.Close()
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			cancel()
			t.Fatalf("round %d: %v (run: %v)", round, err, <-done)
		}
		url := strings.Fields(line)[3] // nats: JetStream on URL (store DIR)
		go io.Copy(io.Discard, pr)
		auth := filepath.Join(dir, "auth")
		nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url, NKey: filepath.Join(auth, natsauth.AdminNKey), TLS: cluster.TLS{CA: filepath.Join(auth, natsauth.CA)}}}, "test")
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			if _, err := kv.PutString(ctx, "k", "kept"); err != nil {
				t.Fatal(err)
			}
		} else if e, err := kv.Get(ctx, "k"); err != nil || string(e.Value()) != want {
			t.Fatalf("after a restart: %v, %v; want %q", e, err, want)
		}
		nc.Close()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("round %d: gateway nats returned %v", round, err)
		}
	}
}

func TestNATSCommandNeedsStore(t *testing.T) {
	_, errOut, err := runCLI(t, "", "nats")
	if err == nil || !strings.Contains(err.Error(), "--store DIR is required") || !strings.Contains(errOut, "usage: gateway nats") {
		t.Fatalf("nats without --store: %v, %q", err, errOut)
	}
}

func TestNATSCommandClusterNeedsRoutes(t *testing.T) {
	_, _, err := runCLI(t, "", "nats", "--store", t.TempDir(), "--cluster", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "--cluster and --routes go together") {
		t.Fatalf("nats --cluster without --routes: %v", err)
	}
}
