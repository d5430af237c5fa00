package config

import (
	"strings"
	"testing"
	"time"
)

// The cluster section loads from YAML and the environment, and each bad
// value is named by its key with what is allowed.
func TestClusterSection(t *testing.T) {
	c := mustLoad(t, "cluster:\n  name: team-a\n  leaseTTL: 5s\n  nats:\n    url: nats://127.0.0.1:4222,tls://n2:4222\n",
		[]string{"GATEWAY_CLUSTER__NATS__TLS__CA=/etc/ca.pem"})
	if c.Cluster.Name != "team-a" || c.Cluster.LeaseTTL != 5*time.Second || c.Cluster.NATS.TLS.CA != "/etc/ca.pem" || c.Cluster.DuplicateWindow != 2*time.Minute || c.Cluster.DrainTimeout != 30*time.Second {
		t.Fatalf("cluster = %+v", c.Cluster)
	}
	_, err := load(t, "cluster:\n  name: a.b\n  leaseTTL: 10ms\n  drainTimeout: 2h\n  nats:\n    url: http://x\n    tls: {cert: c.pem}\n", nil)
	for _, want := range []string{
		`cluster.name: only letters, digits, - and _, got "a.b"`,
		`cluster.leaseTTL: must be at least 1s, got 10ms`,
		`cluster.drainTimeout: must be at most 1h`,
		`cluster.nats.url: want nats://host:port or tls://host:port (comma-separated), got "http://x"`,
		`cluster.nats.tls: cert and key go together`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant it to say %s", err, want)
		}
	}
}
