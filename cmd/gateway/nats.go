package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gateway nats --store DIR [--listen HOST:PORT] [--name NAME] [--cluster HOST:PORT --cluster-name NAME --routes HOST:PORT,...]")
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
	o := natsnode.Options{StoreDir: *store, Listen: *listen, Name: *name, ClusterName: *clusterName, ClusterListen: *clusterListen}
	for r := range strings.SplitSeq(*routes, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.Routes = append(o.Routes, r)
		}
	}
	n, err := natsnode.Start(o)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer n.Shutdown()
	fmt.Fprintf(stdout, "nats: JetStream on %s (store %s)\n", n.ClientURL(), *store)
	if a := n.ClusterAddr(); a != "" {
		fmt.Fprintf(stdout, "nats: routes on %s\n", a)
	}
	<-ctx.Done()
	return nil
}
