// Package cluster holds what the gateway needs to run on several machines
// over NATS JetStream: the cluster config section, the connection, an
// embedded JetStream node (gateway nats, tests), thread leases (one owning
// worker per thread, in a key-value bucket with revision compare-and-set and
// a TTL), the worker registry that placement reads (load and agents), and
// the inbound stream (events published with Nats-Msg-Id, so JetStream's
// duplicate window drops a platform's redeliveries) with its subscriber
// side, which hands each event to the worker that owns its thread.
//
// It knows no platform and no session: a thread is an opaque string and an
// event an opaque payload.
package cluster
