package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterStreams are the JetStream streams the roles make on the cluster
// c names: its streams, and those under its key-value buckets (KV_) and
// object stores (OBJ_). TestClusterReplicas checks that the roles make no
// other.
func clusterStreams(c string) []string {
	out := []string{c + "_inbound", c + "_events", c + "_turns", c + "_entries", "OBJ_" + c + "_web_files"}
	for _, b := range []string{c + "_leases", c + "_workers", wire.OpsBucket(c), wire.EdgesBucket(c), wire.LiveBucket(c), c + "_web",
		c + "_bindings", c + "_prompts", c + "_choices", c + "_budget_holds", c + "_running", c + "_seen", c + "_open", c + "_sessions", c + "_spend", identifyBucket(c)} {
		out = append(out, "KV_"+b)
	}
	return out
}

// replicasSettle bounds the wait for a stream moved to other replicas to
// have a leader and its followers caught up.
const replicasSettle = time.Minute

// replicasInfoWait bounds the wait for one stream's info: a stream that
// does not answer for that long (its node busy, its leader being elected)
// is left as it is, and the role starts; the next start checks it again.
const replicasInfoWait = 10 * time.Second

// moveReplicas moves each of the cluster's existing streams whose replicas
// are not cluster.replicas to it (the setting changed since they were
// made), and waits until each has a leader and followers caught up, so
// that the role's first writes find it settled. Those missing are made
// later, with cluster.replicas, by the packages that own them.
func moveReplicas(ctx context.Context, js jetstream.JetStream, c cluster.Config, log *slog.Logger) error {
	want := max(c.Replicas, 1)
	for _, name := range clusterStreams(c.Name) {
		s, err := streamInfo(ctx, js, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			// A stream made a moment ago by another role may have no
			// leader yet; its owner makes or opens it next, with the
			// setting, and says what fails then.
			log.Warn("cannot read a stream to check its replicas; going on", "stream", name, "err", err)
			continue
		}
		cfg := s.CachedInfo().Config
		if cfg.Replicas == want {
			continue
		}
		log.Info("moving a stream to cluster.replicas", "stream", name, "from", cfg.Replicas, "to", want)
		from := cfg.Replicas
		cfg.Replicas = want
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("cluster.replicas: stream %s from %d to %d replicas (at most the NATS cluster's JetStream nodes): %w", name, from, want, err)
		}
		if err := settled(ctx, js, name, want); err != nil {
			log.Warn("a stream moved to cluster.replicas has not settled yet; going on", "stream", name, "err", err)
		}
	}
	return nil
}

// streamInfo reads a stream's information, asking again while JetStream
// does not answer (a stream just made, or its leader being elected), up
// to replicasInfoWait; a stream that does not exist is an answer.
func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, replicasInfoWait)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := js.Stream(ctx, name)
		if err == nil || errors.Is(err, jetstream.ErrStreamNotFound) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-tick.C:
		}
	}
}

// settled waits until the stream has a leader and want-1 followers, all
// current, up to replicasSettle.
func settled(ctx context.Context, js jetstream.JetStream, name string, want int) error {
	ctx, cancel := context.WithTimeout(ctx, replicasSettle)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		last = streamReady(ctx, js, name, want)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// streamReady reports why the stream is not settled yet, or nil.
func streamReady(ctx context.Context, js jetstream.JetStream, name string, want int) error {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return err
	}
	cl := s.CachedInfo().Cluster
	if want == 1 {
		return nil
	}
	if cl == nil || cl.Leader == "" {
		return errors.New("no leader")
	}
	if len(cl.Replicas) != want-1 {
		return fmt.Errorf("%d followers", len(cl.Replicas))
	}
	for _, p := range cl.Replicas {
		if !p.Current {
			return fmt.Errorf("follower %s not current", p.Name)
		}
	}
	return nil
}

// identifyBucket is the bucket of the Discord identify turns the edges of
// cluster c take (cluster.Turns).
func identifyBucket(c string) string { return c + "_identify" }

// JetStream's error codes for a stream with more replicas than there are
// JetStream nodes to hold them.
const (
	errCodeInsufficientResources = 10023 // a cluster with fewer nodes
	errCodeReplicasNotClustered  = 10074 // one node, not in a cluster
)

// replicasHint names cluster.replicas in an error of a role's start that
// came from asking for more copies than the NATS cluster has nodes.
func replicasHint(err error) error {
	var api *jetstream.APIError
	if errors.As(err, &api) && (api.ErrorCode == errCodeInsufficientResources || api.ErrorCode == errCodeReplicasNotClustered) {
		return fmt.Errorf("%w (cluster.replicas must not exceed the NATS cluster's JetStream nodes)", err)
	}
	return err
}
