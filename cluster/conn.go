package cluster

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Connect connects to cfg.NATS with its credentials and TLS files, as the
// client called name (shown by the NATS server's monitoring); extra
// options come last (a role's inbox prefix: InboxPrefix).
func Connect(cfg Config, name string, extra ...nats.Option) (*nats.Conn, error) {
	if cfg.NATS.URL == "" {
		return nil, errors.New("cluster.nats.url is not set")
	}
	// The dial and TLS handshake get as long as the embedded node gives
	// a handshake (natsnode: 5 s), not nats.go's 2 s, which a loaded
	// host (or a far node) overruns.
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.Timeout(connectTimeout)}
	if f := cfg.NATS.Credentials; f != "" {
		opts = append(opts, nats.UserCredentials(f))
	}
	if f := cfg.NATS.NKey; f != "" {
		o, err := nats.NkeyOptionFromSeed(f)
		if err != nil {
			return nil, fmt.Errorf("cluster.nats.nkey: %w", err)
		}
		opts = append(opts, o)
	}
	if t := cfg.NATS.TLS; t.CA != "" {
		opts = append(opts, nats.RootCAs(t.CA))
	}
	if t := cfg.NATS.TLS; t.Cert != "" {
		opts = append(opts, nats.ClientCert(t.Cert, t.Key))
	}
	opts = append(opts, extra...)
	nc, err := nats.Connect(cfg.NATS.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to %s: %w", cfg.NATS.URL, err)
	}
	return nc, nil
}

// connectTimeout bounds a connection's dial and TLS handshake.
const connectTimeout = 5 * time.Second

// InboxPrefix is the prefix of the reply subjects of a role's connection
// ("edge", "worker"): each role may subscribe to its own replies only
// (cluster/natsauth), so a worker's credentials do not read the answers
// JetStream gives the edges.
func InboxPrefix(cluster, role string) string { return "_INBOX_" + cluster + "_" + role }
