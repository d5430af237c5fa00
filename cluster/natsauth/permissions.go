package natsauth

import (
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats-server/v2/server"
)

// The roles that have credentials of their own.
const (
	RoleEdge   = "edge"
	RoleWorker = "worker"
)

// Permissions are what role may publish and subscribe to on the NATS of
// the gateway cluster c, as the code uses it (ARCHITECTURE.md, "Cluster"):
//
//   - edges publish the inbound events (c.in.<partition>.<thread>), serve
//     the operations (subscribe c.out.<platform> and c.edge.<id>, answer
//     on the request's reply subject only), and write the buckets they
//     own (ops, edges, live, identify, web, web_files);
//   - workers consume the inbound stream (through JetStream, never a
//     plain subscription of c.in), publish only their take-over events
//     there (c.in.<partition>.<thread>.takeover), request operations
//     (c.out.>, c.edge.>), forward events to each other
//     (c.worker.<id>.<partition>) and write the buckets and streams of
//     the thread state (leases, workers, bindings, prompts, choices,
//     budget_holds, running, seen, open, sessions, spend; c.turns,
//     c.entries, c.events).
//
// Neither subscribes to c.in, so no role's credentials watch the
// inbound traffic as it is published; each subscribes to its own reply
// subjects (cluster.InboxPrefix). Both keep the whole JetStream API
// ($JS.API.>): both make, open and move (cluster.replicas) every stream
// and bucket, and the API's subjects cannot be narrowed by a bucket
// prefix. That API could rewrite a stream's configuration (a source
// copying into the inbound stream), which is why workers verify the
// edges' signatures rather than trust the stream. What no role does is
// denied: deleting a stream or a message of one, and, for workers,
// purging one.
func Permissions(role, c string) *server.Permissions {
	kv := func(buckets ...string) []string {
		var out []string
		for _, b := range buckets {
			out = append(out, "$KV."+c+"_"+b+".>")
		}
		return out
	}
	js := []string{"$JS.API.>", "$JS.ACK.>", "$JS.FC.>"}
	// No role deletes a stream or a stream's message; only an edge purges
	// (the web chat's records: cluster/webshare).
	noDelete := []string{"$JS.API.STREAM.DELETE.>", "$JS.API.STREAM.MSG.DELETE.>"}
	switch role {
	case RoleEdge:
		pub := append([]string{c + ".in.*.*"}, js...)
		pub = append(pub, kv("ops", "edges", "live", "identify", "web")...)
		pub = append(pub, "$O."+c+"_web_files.>")
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub, Deny: noDelete},
			Subscribe: &server.SubjectPermission{Allow: []string{c + ".out.*", c + ".edge.*", cluster.InboxPrefix(c, role) + ".>"}},
			// One answer per operation, however long it takes.
			Response: &server.ResponsePermission{MaxMsgs: 1, Expires: time.Hour},
		}
	case RoleWorker:
		pub := append([]string{c + ".in.*.*.takeover", c + ".out.*", c + ".edge.*", c + ".worker.*.*",
			c + ".turns.>", c + ".entries.>", c + ".events.>"}, js...)
		pub = append(pub, kv("leases", "workers", "bindings", "prompts", "choices", "budget_holds", "running", "seen", "open", "sessions", "spend")...)
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub, Deny: append(noDelete, "$JS.API.STREAM.PURGE.>")},
			Subscribe: &server.SubjectPermission{Allow: []string{c + ".worker.*.*", cluster.InboxPrefix(c, role) + ".>"}},
			// A forwarded event's owner says "still taking it" every
			// second until it answers; an inbound event is kept in
			// progress (acked) several times.
			Response: &server.ResponsePermission{MaxMsgs: -1, Expires: time.Hour},
		}
	}
	return nil
}
