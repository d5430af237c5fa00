package clustertest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/acpgw/gateway/cluster/natsauth"
)

// The auth directories of the nodes StartNATS started, by each node's
// client URL; and those RoleYAML made for nodes without authentication
// (their signing keys only), by the URL it was given.
var (
	authMu    sync.Mutex
	authByURL = map[string]*natsauth.Dir{}
)

func registerAuth(t testing.TB, url string, d *natsauth.Dir) {
	authMu.Lock()
	authByURL[url] = d
	authMu.Unlock()
	t.Cleanup(func() {
		authMu.Lock()
		delete(authByURL, url)
		authMu.Unlock()
	})
}

// authOf is the auth directory of the cluster at url (a comma-separated
// list: its first), nil when it has none.
func authOf(url string) *natsauth.Dir {
	first, _, _ := strings.Cut(url, ",")
	authMu.Lock()
	defer authMu.Unlock()
	return authByURL[first]
}

// Auth is the auth directory of the nodes StartNATS started (nil for a
// node without authentication).
func Auth(url string) *natsauth.Dir { return authOf(url) }

// RoleYAML returns the keys of the cluster section (indented by two
// spaces, under "cluster:") that a role of kind role ("edge", "worker", or
// "" for both kinds: the signing keys only) needs to reach url: the NATS
// URL with the role's NKey and the CA when the nodes have authentication,
// and the edges' signing key and the workers' edge keys. A cluster without
// authentication (a node of StartNode) gets signing keys made once for
// url, kept until the test ends.
func RoleYAML(t testing.TB, url, role string) string {
	t.Helper()
	d := authOf(url)
	secured := d != nil
	if d == nil {
		// The same nodes in any order (URL's rotations) share keys.
		urls := strings.Split(url, ",")
		slices.Sort(urls)
		key := "keys:" + strings.Join(urls, ",")
		authMu.Lock()
		d = authByURL[key]
		authMu.Unlock()
		if d == nil {
			var err error
			if d, err = natsauth.Ensure(t.TempDir(), nil); err != nil {
				t.Fatal(err)
			}
			registerAuth(t, key, d)
		}
	}
	var b strings.Builder
	if role != natsauth.RoleWorker {
		fmt.Fprintf(&b, "  signingKey: %s\n", d.File(natsauth.EdgeSigningKey))
	}
	if role != natsauth.RoleEdge {
		fmt.Fprintf(&b, "  edgeKeys: %s\n", d.File(natsauth.EdgeKeys))
	}
	fmt.Fprintf(&b, "  nats:\n    url: %s\n", url)
	if secured {
		nkey := natsauth.EdgeNKey
		if role == natsauth.RoleWorker {
			nkey = natsauth.WorkerNKey
		}
		fmt.Fprintf(&b, "    nkey: %s\n    tls:\n      ca: %s\n", d.File(nkey), d.File(natsauth.CA))
	}
	return b.String()
}

// ClientOptions are the options of a test's client of url: the admin's
// identity and the CA where the nodes have authentication, none else.
func ClientOptions(url string) ([]nats.Option, error) {
	d := authOf(url)
	if d == nil {
		return nil, nil
	}
	o, err := nats.NkeyOptionFromSeed(d.File(natsauth.AdminNKey))
	if err != nil {
		return nil, err
	}
	return []nats.Option{o, nats.Secure(d.ClientTLS())}, nil
}

// connect connects a test's client to url (ClientOptions).
func connect(url string) (*nats.Conn, error) {
	opts, err := ClientOptions(url)
	if err != nil {
		return nil, err
	}
	// As cluster.Connect: a loaded host overruns nats.go's 2 s.
	return nats.Connect(url, append(opts, nats.Timeout(5*time.Second))...)
}
