package config

import (
	"strings"
	"testing"
)

// cluster.replicas defaults to 1, takes 1 to 5, and a value out of that
// range is named by its key with the range.
func TestClusterReplicas(t *testing.T) {
	if c := mustLoad(t, "", nil); c.Cluster.Replicas != 1 {
		t.Errorf("default cluster.replicas = %d, want 1", c.Cluster.Replicas)
	}
	for _, n := range []string{"1", "3", "5"} {
		if c := mustLoad(t, "cluster:\n  replicas: "+n+"\n", nil); c.Cluster.Replicas != int(n[0]-'0') {
			t.Errorf("cluster.replicas: %s loaded as %d", n, c.Cluster.Replicas)
		}
	}
	if c := mustLoad(t, "", []string{"GATEWAY_CLUSTER__REPLICAS=3"}); c.Cluster.Replicas != 3 {
		t.Errorf("GATEWAY_CLUSTER__REPLICAS=3 loaded as %d", c.Cluster.Replicas)
	}
	for _, n := range []string{"0", "6", "-1"} {
		_, err := load(t, "cluster:\n  replicas: "+n+"\n", nil)
		want := "cluster.replicas: want 1 to 5 (at most the NATS cluster's JetStream nodes: 3 for three), got " + n
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cluster.replicas: %s: error %v\nwant it to say %s", n, err, want)
		}
	}
}
