package cluster

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Config is the cluster section: where the NATS cluster is and the name
// that keeps this gateway's buckets, streams and subjects apart from
// another gateway's on the same NATS. gateway run ignores it.
type Config struct {
	// Name is the gateway cluster's name: letters, digits, "-" and "_", at
	// most 32 (default "gateway"). Buckets, streams and subjects start with
	// it.
	Name string `koanf:"name" validate:"required,max=32"`
	// NATS is how to reach the NATS cluster.
	NATS NATS `koanf:"nats"`
	// LeaseTTL is how long a worker's lease on a thread lasts without a
	// renewal: a worker that dies loses its threads this long after its
	// last renewal, and the inbound event it was taking is given out
	// again by then (the stream's ack wait, AckWait). 1s to 10m (default
	// 15s).
	LeaseTTL time.Duration `koanf:"leaseTTL" validate:"min=1s,max=10m"`
	// DuplicateWindow is how long the inbound stream remembers an event's
	// id, dropping a redelivery of it: 1s to 1h (default 2m; Slack
	// redelivers within minutes).
	DuplicateWindow time.Duration `koanf:"duplicateWindow" validate:"min=1s,max=1h"`
	// DrainTimeout is how long a worker told to stop (SIGTERM) lets its
	// running turns finish, claiming no new thread meanwhile, before it
	// cancels them with the interrupted notice and releases its threads:
	// 0 (cancel at once) to 1h (default 30s).
	DrainTimeout time.Duration `koanf:"drainTimeout" validate:"min=0,max=1h"`
	// Replicas is how many copies JetStream keeps of every bucket and
	// stream the gateway creates (leases, bindings, the inbound stream, the
	// event log, ...): 1 to 5 (default 1). 3 is right for a 3-node NATS
	// cluster: losing one node then loses nothing. It must not exceed the
	// NATS cluster's JetStream nodes (creating the buckets fails). A change
	// applies when the roles next start: each moves the existing buckets
	// and streams to the new count. (Check bounds it, to name the whole
	// range in its error.)
	Replicas int `koanf:"replicas"`
	// SigningKey is an edge's signing key: a file holding an NKey seed
	// (gateway nats makes AUTH/edge-signing.nk). The edge signs every
	// inbound event it publishes with it; gateway edge refuses to start
	// without it.
	SigningKey string `koanf:"signingKey"`
	// EdgeKeys is a worker's file of the edges' public signing keys, one
	// a line (gateway nats makes AUTH/edge-keys.pub): a worker drops,
	// with an error, every inbound event not signed by one of them (but
	// the workers' own take-over events, which carry no author).
	// gateway worker refuses to start without it.
	EdgeKeys string `koanf:"edgeKeys"`
	// EventLog is the raw ACP event log's retention on the cluster (its
	// stream <name>_events, a subject per session).
	EventLog EventLog `koanf:"eventLog"`
}

// EventLog is cluster.eventLog: how long and how much of the raw ACP
// event log the cluster keeps; the oldest frames go first.
type EventLog struct {
	// MaxAge drops frames older than this: 1h to 8760h (default 720h,
	// 30 days).
	MaxAge time.Duration `koanf:"maxAge" validate:"min=1h,max=8760h"`
	// MaxBytes caps the whole stream, in bytes: 1 MiB to 1 TiB (default
	// 10 GiB).
	MaxBytes int64 `koanf:"maxBytes" validate:"min=1048576,max=1099511627776"`
}

// NATS is cluster.nats.
type NATS struct {
	// URL lists the NATS servers, comma-separated (nats://host:4222,
	// tls://host:4222). "" means no cluster.
	URL string `koanf:"url"`
	// Credentials is a NATS credentials file (.creds: a user JWT and its
	// NKey seed); "" for none.
	Credentials string `koanf:"credentials"`
	// NKey is a file holding an NKey user's seed ("SU..."), the
	// identity gateway nats makes for each role (AUTH/edge.nk,
	// AUTH/worker.nk); "" for none.
	NKey string `koanf:"nkey"`
	// TLS holds the TLS files; all empty means the system's roots for a
	// tls:// URL and no client certificate.
	TLS TLS `koanf:"tls"`
}

// TLS is cluster.nats.tls.
type TLS struct {
	// CA is a PEM file of the certificate authorities to trust.
	CA string `koanf:"ca"`
	// Cert is the client certificate's PEM file (with Key).
	Cert string `koanf:"cert"`
	// Key is the client key's PEM file (with Cert).
	Key string `koanf:"key"`
}

// Defaults of the cluster section.
const (
	DefaultName             = "gateway"
	DefaultLeaseTTL         = 15 * time.Second
	DefaultDuplicateWindow  = 2 * time.Minute
	DefaultEventLogMaxAge   = 30 * 24 * time.Hour
	DefaultEventLogMaxBytes = 10 << 30
	DefaultDrainTimeout     = 30 * time.Second
	DefaultReplicas         = 1
	MinReplicas             = 1
	MaxReplicas             = 5 // JetStream's own bound
)

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Name: DefaultName, LeaseTTL: DefaultLeaseTTL, DuplicateWindow: DefaultDuplicateWindow, DrainTimeout: DefaultDrainTimeout, Replicas: DefaultReplicas,
		EventLog: EventLog{MaxAge: DefaultEventLogMaxAge, MaxBytes: DefaultEventLogMaxBytes}}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidName reports whether s can stand as one token of a subject or a
// bucket's name: letters, digits, "-" and "_" (a cluster's name, an
// edge's or worker's id, a platform).
func ValidName(s string) bool { return nameRE.MatchString(s) }

// Check reports what the validate tags cannot: the name's characters, the
// URLs' schemes, and a certificate without its key. Each error starts with
// the YAML key. It does no I/O.
func (c Config) Check() []error {
	var errs []error
	if c.Name != "" && !nameRE.MatchString(c.Name) {
		errs = append(errs, fmt.Errorf("cluster.name: only letters, digits, - and _, got %q", c.Name))
	}
	if c.Replicas < MinReplicas || c.Replicas > MaxReplicas {
		errs = append(errs, fmt.Errorf("cluster.replicas: want %d to %d (at most the NATS cluster's JetStream nodes: 3 for three), got %d", MinReplicas, MaxReplicas, c.Replicas))
	}
	if c.NATS.URL != "" {
		for _, u := range strings.Split(c.NATS.URL, ",") {
			p, err := url.Parse(strings.TrimSpace(u))
			if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls") {
				errs = append(errs, fmt.Errorf("cluster.nats.url: want nats://host:port or tls://host:port (comma-separated), got %q", u))
			}
		}
	}
	if (c.NATS.TLS.Cert == "") != (c.NATS.TLS.Key == "") {
		errs = append(errs, fmt.Errorf("cluster.nats.tls: cert and key go together (cert %q, key %q)", c.NATS.TLS.Cert, c.NATS.TLS.Key))
	}
	return errs
}
