// Package egress is the network policy of a sandboxed agent: where it may
// connect, decided on the host.
//
// The agent runs in a network namespace of its own, which has nothing but
// its own loopback. Its way out is a unix socket bind-mounted into the
// sandbox, served on the host by a Proxy: an HTTP proxy (CONNECT, and
// absolute-URI requests for http://) that resolves each destination,
// refuses what the Policy refuses (the host's own addresses, loopback,
// link-local ones such as the cloud metadata address, unless listed;
// everything not listed in mode "allow"; the Deny entries always), and
// dials the very addresses it checked.
//
// Inside, RunInside (the hidden "gateway sandbox-exec") is the agent's
// parent: it serves the proxy variables' port on the sandbox's loopback,
// a transparent forwarder per Allow entry (a name mapped by Hosts to a
// loopback address of its own), and starts the agent with HTTP_PROXY and
// the rest set.
package egress
