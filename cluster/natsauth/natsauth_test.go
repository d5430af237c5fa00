package natsauth_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsauth"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// start runs a node with the auth directory's users and TLS, as gateway
// nats does, for the cluster "harness".
func start(t *testing.T) (*natsauth.Dir, string) {
	t.Helper()
	d, err := natsauth.Ensure(filepath.Join(t.TempDir(), "auth"), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Users: d.Users("harness"), TLS: d.ServerTLS()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return d, n.ClientURL()
}

// as connects with the seed file's identity (none for ""), trusting the
// directory's CA, with the role's inbox prefix.
func as(d *natsauth.Dir, url, seed, role string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Secure(d.ClientTLS()), nats.NoReconnect(), nats.CustomInboxPrefix(cluster.InboxPrefix("harness", role))}
	if seed != "" {
		o, err := nats.NkeyOptionFromSeed(d.File(seed))
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
	}
	return nats.Connect(url, opts...)
}

// The directory is made once, 0700 with 0600 files, and read again as it
// is.
func TestEnsureMakesOnceAndKeeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	d1, err := natsauth.Ensure(dir, []string{"nats.example", "10.1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v, want 0700", dir, st.Mode().Perm())
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 10 {
		t.Errorf("%d files, want 10: %v", len(es), es)
	}
	for _, e := range es {
		if info, _ := e.Info(); info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
	}
	cert, _ := os.ReadFile(d1.File(natsauth.ServerCert))
	d2, err := natsauth.Ensure(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(d2.File(natsauth.ServerCert))
	if d1.Edge != d2.Edge || d1.Worker != d2.Worker || d1.SigningKey != d2.SigningKey || d1.Route != d2.Route || !bytes.Equal(cert, again) {
		t.Errorf("a second Ensure made new credentials")
	}
	pub, _ := os.ReadFile(d1.File(natsauth.EdgeKeys))
	if !strings.Contains(string(pub), d1.SigningKey) {
		t.Errorf("%s does not hold the signing key %s:\n%s", natsauth.EdgeKeys, d1.SigningKey, pub)
	}
	if _, err := cluster.LoadEdgeKeys(d1.File(natsauth.EdgeKeys)); err != nil {
		t.Errorf("the workers' keys do not load: %v", err)
	}
	if _, err := cluster.LoadSigner(d1.File(natsauth.EdgeSigningKey)); err != nil {
		t.Errorf("the edges' signing key does not load: %v", err)
	}
	// A role's export holds its files and nothing of the other's.
	for role, want := range map[string][]string{
		natsauth.RoleEdge:   {natsauth.CA, natsauth.EdgeSigningKey, natsauth.EdgeNKey},
		natsauth.RoleWorker: {natsauth.CA, natsauth.EdgeKeys, natsauth.WorkerNKey},
	} {
		out := filepath.Join(t.TempDir(), role)
		if err := d1.Export(role, out); err != nil {
			t.Fatal(err)
		}
		if err := d1.Export(role, out); err != nil { // again, at the next start
			t.Fatal(err)
		}
		es, _ := os.ReadDir(out)
		var got []string
		for _, e := range es {
			got = append(got, e.Name())
			if info, _ := e.Info(); info.Mode().Perm() != 0o600 {
				t.Errorf("%s/%s: mode %v, want 0600", role, e.Name(), info.Mode().Perm())
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("export %s: %q, want %q", role, got, want)
		}
	}
}

// A client without credentials, with an identity the server does not
// know, or without TLS, is refused; the roles' identities connect.
func TestOnlyTheRolesConnect(t *testing.T) {
	d, url := start(t)
	if nc, err := as(d, url, "", ""); err == nil {
		nc.Close()
		t.Fatal("a client without credentials connected")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("no credentials: %v, want an authorization violation", err)
	}
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	stranger := filepath.Join(t.TempDir(), "stranger.nk")
	if err := os.WriteFile(stranger, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	o, _ := nats.NkeyOptionFromSeed(stranger)
	if nc, err := nats.Connect(url, o, nats.Secure(d.ClientTLS()), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("an unknown NKey connected")
	}
	o, _ = nats.NkeyOptionFromSeed(d.File(natsauth.WorkerNKey))
	if nc, err := nats.Connect(strings.Replace(url, "tls://", "nats://", 1), o, nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a client that does not trust the CA connected (no TLS to speak of)")
	}
	for _, seed := range []string{natsauth.EdgeNKey, natsauth.WorkerNKey, natsauth.AdminNKey} {
		nc, err := as(d, url, seed, "")
		if err != nil {
			t.Fatalf("%s: %v", seed, err)
		}
		nc.Close()
	}
}

// Each role publishes and subscribes to what its part needs and nothing
// else: a worker publishes no inbound event but its take-overs, serves no
// operation, reads no edge's replies and writes no edge's bucket; an edge
// asks no operation of another edge and forwards nothing to a worker;
// neither watches the inbound subjects.
func TestRolePermissions(t *testing.T) {
	d, url := start(t)
	for _, tc := range []struct {
		role, seed string
		sub        bool // a subscription, else a publish
		subject    string
		allowed    bool
	}{
		{"worker", natsauth.WorkerNKey, false, "harness.in.3.dGhyZWFk", false},
		{"worker", natsauth.WorkerNKey, false, "harness.in.3.dGhyZWFk.takeover", true},
		{"worker", natsauth.WorkerNKey, true, "harness.in.>", false},
		{"worker", natsauth.WorkerNKey, true, ">", false},
		{"worker", natsauth.WorkerNKey, true, "harness.out.web", false},
		{"worker", natsauth.WorkerNKey, true, "harness.edge.e1", false},
		{"worker", natsauth.WorkerNKey, true, cluster.InboxPrefix("harness", "edge") + ".>", false},
		{"worker", natsauth.WorkerNKey, true, "_INBOX.>", false},
		{"worker", natsauth.WorkerNKey, false, "$KV.harness_web.k", false},
		{"worker", natsauth.WorkerNKey, false, "$KV.harness_ops.k", false},
		{"worker", natsauth.WorkerNKey, false, "harness.out.web", true},
		{"worker", natsauth.WorkerNKey, false, "harness.edge.e1", true},
		{"worker", natsauth.WorkerNKey, false, "harness.worker.w2.3", true},
		{"worker", natsauth.WorkerNKey, true, "harness.worker.w1.3", true},
		{"worker", natsauth.WorkerNKey, false, "$KV.harness_leases.k", true},
		{"worker", natsauth.WorkerNKey, false, "$KV.harness_sessions.k", true},
		{"worker", natsauth.WorkerNKey, false, "$KV.harness_spend.k", true},
		{"worker", natsauth.WorkerNKey, false, "$JS.API.STREAM.PURGE.harness_inbound", false},
		{"worker", natsauth.WorkerNKey, false, "$JS.API.STREAM.DELETE.harness_inbound", false},
		{"worker", natsauth.WorkerNKey, false, "$JS.API.STREAM.MSG.DELETE.harness_inbound", false},
		{"worker", natsauth.WorkerNKey, false, "$JS.API.STREAM.INFO.harness_inbound", true},
		{"edge", natsauth.EdgeNKey, false, "$JS.API.STREAM.DELETE.KV_harness_leases", false},
		{"edge", natsauth.EdgeNKey, false, "$JS.API.STREAM.PURGE.KV_harness_web", true},
		{"edge", natsauth.EdgeNKey, false, "harness.out.web", false},
		{"edge", natsauth.EdgeNKey, false, "harness.edge.e2", false},
		{"edge", natsauth.EdgeNKey, false, "harness.worker.w1.3", false},
		{"edge", natsauth.EdgeNKey, true, "harness.in.>", false},
		{"edge", natsauth.EdgeNKey, true, "harness.worker.w1.3", false},
		{"edge", natsauth.EdgeNKey, true, cluster.InboxPrefix("harness", "worker") + ".>", false},
		{"edge", natsauth.EdgeNKey, false, "$KV.harness_leases.k", false},
		{"edge", natsauth.EdgeNKey, false, "$KV.harness_bindings.k", false},
		{"edge", natsauth.EdgeNKey, false, "harness.in.3.dGhyZWFk", true},
		{"edge", natsauth.EdgeNKey, true, "harness.out.web", true},
		{"edge", natsauth.EdgeNKey, true, "harness.edge.e1", true},
		{"edge", natsauth.EdgeNKey, false, "$KV.harness_web.k", true},
	} {
		verb := "publish"
		if tc.sub {
			verb = "subscribe"
		}
		t.Run(tc.role+" "+verb+" "+tc.subject, func(t *testing.T) {
			nc, err := as(d, url, tc.seed, tc.role)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if tc.sub {
				_, err = nc.SubscribeSync(tc.subject)
			} else {
				err = nc.Publish(tc.subject, []byte("x"))
			}
			if err != nil {
				t.Fatal(err)
			}
			// The server answers a violation before the PONG.
			if err := nc.FlushTimeout(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			got := nc.LastError()
			denied := got != nil && errors.Is(got, nats.ErrPermissionViolation)
			if got != nil && !denied {
				t.Fatalf("unexpected error %v", got)
			}
			if denied == tc.allowed {
				t.Errorf("%s %s as %s: error %v, want allowed %v", verb, tc.subject, tc.role, got, tc.allowed)
			}
		})
	}
}

// A node's route port takes only a node: one that presents no certificate
// of the CA is refused at the TLS handshake, and one with the certificate
// but without the route password is refused at its CONNECT.
func TestRoutesAskCertificateAndPassword(t *testing.T) {
	d, err := natsauth.Ensure(filepath.Join(t.TempDir(), "auth"), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	route := l.Addr().String()
	l.Close()
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Name: "n1",
		ClusterName: "test", ClusterListen: route, Routes: []string{route},
		Users: d.Users("harness"), TLS: d.ServerTLS(), RoutePassword: d.Route, RouteTLS: d.RouteTLS()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	// dial connects to the route port and shakes hands with cfg (the
	// node speaks TLS first on its routes), then reads its INFO.
	dial := func(cfg *tls.Config) (*tls.Conn, *bufio.Reader, error) {
		c, err := net.DialTimeout("tcp", route, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		tc := tls.Client(c, cfg)
		if err := tc.Handshake(); err != nil {
			return nil, nil, err
		}
		// The handshake's end reaches the client before the node
		// checked the client's certificate: a refusal shows on the
		// first read.
		r := bufio.NewReader(tc)
		line, err := r.ReadString('\n')
		if err == nil && !strings.HasPrefix(line, "INFO ") {
			t.Fatalf("route port: %q; want its INFO", line)
		}
		return tc, r, err
	}
	if _, _, err := dial(&tls.Config{RootCAs: d.ClientTLS().RootCAs, ServerName: "127.0.0.1"}); err == nil {
		t.Error("a route without a certificate got past the TLS handshake")
	}
	tc, r, err := dial(&tls.Config{RootCAs: d.ClientTLS().RootCAs, ServerName: "127.0.0.1", Certificates: d.RouteTLS().Certificates})
	if err != nil {
		t.Fatalf("a route with the node's certificate: %v", err)
	}
	if _, err := tc.Write([]byte(`CONNECT {"verbose":false,"pedantic":false,"user":"route","pass":"wrong","tls_required":true,"name":"intruder","cluster":"test"}` + "\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	var said []string
	for {
		line, err := r.ReadString('\n')
		said = append(said, strings.TrimSpace(line))
		if strings.Contains(line, "Authorization Violation") {
			return
		}
		if err != nil || strings.HasPrefix(line, "PONG") {
			t.Fatalf("a route with a wrong password: the node said %q (%v), want an authorization violation", said, err)
		}
	}
}
