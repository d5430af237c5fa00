// Package natsnode runs an embedded NATS JetStream node in this process, for
// gateway nats (trying a cluster on one machine) and for tests.
package natsnode

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Options configure an embedded JetStream node.
type Options struct {
	// StoreDir holds JetStream's files; a node restarted on the same
	// directory keeps its streams and buckets. Required.
	StoreDir string
	// Listen is the client host:port (port 0 picks a free one).
	Listen string
	// Name is the server's name, unique in a NATS cluster ("" = derived
	// from Listen by the server).
	Name string
	// ClusterName names the NATS cluster the node routes in (with
	// ClusterListen).
	ClusterName string
	// ClusterListen is the host:port for routes from the other nodes
	// (port 0 picks a free one); "" runs the node alone.
	ClusterListen string
	// Routes are the nodes' route addresses (host:port); with ClusterListen
	// at least one is required (JetStream asks for it), and this node's own
	// address may be among them, so every node can get the same list.
	Routes []string
	// Users, if any, are the only clients the node accepts (NKey users,
	// each with its permissions; natsauth.Dir.Users); none accepts
	// anyone, which gateway nats allows on loopback only.
	Users []*server.NkeyUser
	// TLS, if set, is required of every client.
	TLS *tls.Config
	// RoutePassword, if set, is asked of every route (the nodes of a
	// cluster share it: natsauth.Dir.RoutePassword).
	RoutePassword string
	// RouteTLS, if set, is required of every route, both ways
	// (natsauth.Dir.RouteTLS).
	RouteTLS *tls.Config
}

// Node is an embedded JetStream node, in this process.
type Node struct {
	s *server.Server
}

// Start starts a node and waits until it accepts clients.
func Start(o Options) (*Node, error) {
	if o.StoreDir == "" {
		return nil, errors.New("natsnode: a node needs a store directory")
	}
	host, port, err := splitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("natsnode: listen %q: %w", o.Listen, err)
	}
	opts := &server.Options{
		ServerName: o.Name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   o.StoreDir,
		NoSigs:     true,
		NoLog:      true,
		Nkeys:      o.Users,
	}
	if o.TLS != nil {
		opts.TLSConfig, opts.TLS, opts.TLSTimeout = o.TLS, true, 5
	}
	if o.ClusterListen != "" {
		ch, cp, err := splitHostPort(o.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("natsnode: cluster listen %q: %w", o.ClusterListen, err)
		}
		if len(o.Routes) == 0 {
			return nil, errors.New("natsnode: a clustered node needs routes (its own address may be among them)")
		}
		opts.Cluster = server.ClusterOpts{Name: o.ClusterName, Host: ch, Port: cp}
		var user *url.Userinfo
		if o.RoutePassword != "" {
			opts.Cluster.Username, opts.Cluster.Password = "route", o.RoutePassword
			user = url.UserPassword("route", o.RoutePassword)
		}
		if o.RouteTLS != nil {
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = o.RouteTLS, 5
		}
		for _, r := range o.Routes {
			opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats-route", Host: r, User: user})
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsnode: node: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, errors.New("natsnode: node did not start accepting clients within 30s")
	}
	return &Node{s: s}, nil
}

// splitHostPort parses host:port, the port 0 meaning any free port.
func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	if n == 0 {
		n = server.RANDOM_PORT
	}
	return h, n, nil
}

// ClientURL is the nats:// URL clients connect to.
func (n *Node) ClientURL() string { return n.s.ClientURL() }

// ClusterAddr is the host:port other nodes route to ("" when alone).
func (n *Node) ClusterAddr() string {
	if a := n.s.ClusterAddr(); a != nil {
		return a.String()
	}
	return ""
}

// Shutdown stops the node and waits until it has stopped.
func (n *Node) Shutdown() {
	n.s.Shutdown()
	n.s.WaitForShutdown()
}
