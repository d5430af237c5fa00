package cluster

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Connect connects to cfg.NATS with its credentials and TLS files, as the
// client called name (shown by the NATS server's monitoring).
func Connect(cfg Config, name string) (*nats.Conn, error) {
	if cfg.NATS.URL == "" {
		return nil, errors.New("cluster.nats.url is not set")
	}
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1)}
	if f := cfg.NATS.Credentials; f != "" {
		opts = append(opts, nats.UserCredentials(f))
	}
	if t := cfg.NATS.TLS; t.CA != "" {
		opts = append(opts, nats.RootCAs(t.CA))
	}
	if t := cfg.NATS.TLS; t.Cert != "" {
		opts = append(opts, nats.ClientCert(t.Cert, t.Key))
	}
	nc, err := nats.Connect(cfg.NATS.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to %s: %w", cfg.NATS.URL, err)
	}
	return nc, nil
}
