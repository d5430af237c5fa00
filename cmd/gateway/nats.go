package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/natsauth"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// runNATS serves an embedded JetStream node until ctx ends: a NATS for
// trying edges and workers on one machine (production points
// cluster.nats.url at a NATS cluster). With --cluster it routes to the
// nodes in --routes, so several form a cluster on loopback.
func runNATS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := fs.String("store", "", "JetStream's `directory` (required; kept across restarts)")
	listen := fs.String("listen", "127.0.0.1:4222", "client `host:port` (port 0 picks a free one)")
	name := fs.String("name", "", "server `name`, unique in a cluster (default: derived by the server)")
	clusterListen := fs.String("cluster", "", "route `host:port` for the other nodes; empty runs the node alone")
	clusterName := fs.String("cluster-name", "gateway", "the NATS cluster's `name` (with --cluster)")
	routes := fs.String("routes", "", "every node's route address, comma-separated `host:port,...` (required with --cluster; this node's own may be listed)")
	authDir := fs.String("auth", "", "the credentials' `directory`, made at the first start (default STORE/auth; every node of a cluster gets a copy of one)")
	noAuth := fs.Bool("no-auth", false, "accept any client without credentials or TLS (refused unless --listen and --cluster are on loopback)")
	tlsHosts := fs.String("tls-host", "", "more host names or addresses of this node, comma-separated `name,...`, for the server certificate made at the first start (localhost, 127.0.0.1 and ::1 are always in it)")
	exportEdge := fs.String("export-edge", "", "a `directory` to write an edge's files into at each start (its NKey, its signing key, the CA): what an edge's machine gets")
	exportWorker := fs.String("export-worker", "", "a `directory` to write a worker's files into at each start (its NKey, the edges' public keys, the CA): what a worker's machine gets")
	gatewayName := fs.String("gateway", "gateway", "the gateway cluster's `name` (cluster.name) whose subjects the roles' permissions name")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gateway nats --store DIR [--listen HOST:PORT] [--name NAME] [--auth DIR [--export-edge DIR] [--export-worker DIR] | --no-auth] [--tls-host NAME,...] [--gateway NAME] [--cluster HOST:PORT --cluster-name NAME --routes HOST:PORT,...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("nats: unexpected argument %q", fs.Arg(0))
	}
	if *store == "" {
		fs.Usage()
		return errors.New("nats: --store DIR is required")
	}
	if (*routes != "") != (*clusterListen != "") {
		return errors.New("nats: --cluster and --routes go together (every node can get the same --routes, its own address among them)")
	}
	if !cluster.ValidName(*gatewayName) {
		return fmt.Errorf("nats: --gateway %q: want letters, digits, - and _ (cluster.name)", *gatewayName)
	}
	o := natsnode.Options{StoreDir: *store, Listen: *listen, Name: *name, ClusterName: *clusterName, ClusterListen: *clusterListen}
	for r := range strings.SplitSeq(*routes, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.Routes = append(o.Routes, r)
		}
	}
	var auth *natsauth.Dir
	if *noAuth {
		if *exportEdge != "" || *exportWorker != "" || *authDir != "" {
			return errors.New("nats: --no-auth makes no credentials: --auth and --export-* need it off")
		}
		for _, a := range []string{*listen, *clusterListen} {
			if a != "" && !loopbackAddr(a) {
				return fmt.Errorf("nats: --no-auth on %s: anyone who reaches it would read every thread and speak as anyone; without credentials gateway nats listens on loopback only (127.0.0.1, ::1, localhost)", a)
			}
		}
	} else {
		dir := *authDir
		if dir == "" {
			dir = filepath.Join(*store, "auth")
		}
		var hosts []string
		for h := range strings.SplitSeq(*tlsHosts, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hosts = append(hosts, h)
			}
		}
		var err error
		if auth, err = natsauth.Ensure(dir, hosts); err != nil {
			return fmt.Errorf("nats: --auth: %w", err)
		}
		for role, dir := range map[string]string{natsauth.RoleEdge: *exportEdge, natsauth.RoleWorker: *exportWorker} {
			if dir != "" {
				if err := auth.Export(role, dir); err != nil {
					return fmt.Errorf("nats: --export-%s: %w", role, err)
				}
			}
		}
		o.Users, o.TLS = auth.Users(*gatewayName), auth.ServerTLS()
		o.RoutePassword, o.RouteTLS = auth.Route, auth.RouteTLS()
	}
	n, err := natsnode.Start(o)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer n.Shutdown()
	fmt.Fprintf(stdout, "nats: JetStream on %s (store %s)\n", n.ClientURL(), *store)
	if auth != nil {
		fmt.Fprintf(stdout, "nats: credentials in %s (for cluster.name %s); copy to each machine only its role's files:\n", auth.Path, *gatewayName)
		fmt.Fprintf(stdout, "nats:   edge:   cluster.nats.nkey=%s cluster.signingKey=%s cluster.nats.tls.ca=%s\n",
			auth.File(natsauth.EdgeNKey), auth.File(natsauth.EdgeSigningKey), auth.File(natsauth.CA))
		fmt.Fprintf(stdout, "nats:   worker: cluster.nats.nkey=%s cluster.edgeKeys=%s cluster.nats.tls.ca=%s\n",
			auth.File(natsauth.WorkerNKey), auth.File(natsauth.EdgeKeys), auth.File(natsauth.CA))
	} else {
		fmt.Fprintln(stdout, "nats: WARNING: no authentication (--no-auth): any local account can read and write everything")
	}
	if a := n.ClusterAddr(); a != "" {
		fmt.Fprintf(stdout, "nats: routes on %s\n", a)
	}
	<-ctx.Done()
	return nil
}

// loopbackAddr reports whether host:port listens on loopback only.
func loopbackAddr(hp string) bool {
	h, _, err := net.SplitHostPort(hp)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
