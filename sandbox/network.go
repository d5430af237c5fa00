package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/acpgw/gateway/sandbox/egress"
)

// netPlan is what the network policy adds to a sandbox: binds, and the
// command the agent runs under inside.
type netPlan struct {
	binds []op
	inner []string
}

// Policy is n as the egress proxy takes it.
func (n Network) Policy() egress.Policy {
	return egress.Policy{Mode: n.Mode, Allow: n.Allow, Deny: n.Deny}
}

// network prepares s.Network for one process. NetNone needs nothing: the
// sandbox's network namespace has only its own loopback. NetFull and
// NetAllow get an egress proxy of their own on the host (a unix socket in
// a private 0700 directory, closed by w.Close), bound into the sandbox at
// the same path, an /etc/hosts that maps the allowed names to their
// forwarders inside, and the gateway's sandbox-exec as the agent's parent
// inside, which serves the proxy variables and forwards to the socket.
func (s Spec) network(ctx context.Context, w *Wrapped, log *slog.Logger) (*netPlan, error) {
	pol := s.Network.Policy()
	if err := pol.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox: network: %w", err)
	}
	if s.Network.Mode == "" || s.Network.Mode == NetNone {
		return &netPlan{}, nil
	}
	if s.Exe == "" {
		return nil, errors.New("sandbox: network " + s.Network.Mode + " needs the gateway's executable (sandbox-exec) in the sandbox")
	}
	dir, err := os.MkdirTemp("", "gw-egress-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: the egress proxy's directory: %w", err)
	}
	w.closers = append(w.closers, func() error { return os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: the egress proxy's directory: %w", err)
	}
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, egress.Hosts(pol), 0o600); err != nil {
		return nil, fmt.Errorf("sandbox: the sandbox's /etc/hosts: %w", err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	x, err := egress.Listen(sock, pol, log.With("part", "egress"))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := x.Serve(serveCtx); err != nil {
			log.Warn("the agent's egress proxy stopped", "err", err)
		}
	}()
	w.closers = append(w.closers, func() error {
		cancel()
		err := x.Close()
		<-served
		return err
	})
	inner := append([]string{s.Exe, "sandbox-exec"}, egress.InsideArgs(sock, pol)...)
	return &netPlan{
		binds: []op{{kind: "rw", src: sock, dst: sock}, {kind: "ro", src: hosts, dst: "/etc/hosts"}},
		inner: append(inner, "--"),
	}, nil
}
