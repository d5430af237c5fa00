package main

import (
	"context"
	"errors"
	"io"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterEvents reads one session's frames from the cluster's event log
// stream, on url (cfg.NATS.URL when empty, with cfg's credentials and TLS
// files), as NDJSON for the replay.
func clusterEvents(ctx context.Context, cfg cluster.Config, url, session string) (io.Reader, error) {
	if url != "" {
		cfg.NATS.URL = url
	}
	if cfg.NATS.URL == "" {
		return nil, errors.New("--session needs a NATS: --nats URL or cluster.nats.url")
	}
	// A worker's identity reads the event log: its reply subjects then.
	nc, err := cluster.Connect(cfg, "gateway replay", nats.CustomInboxPrefix(cluster.InboxPrefix(cfg.Name, "worker")))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	l, err := jsstore.LookupEventLog(ctx, js, cfg.Name)
	if err != nil {
		return nil, err
	}
	return l.Reader(ctx, session)
}
