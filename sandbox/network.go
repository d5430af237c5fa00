package sandbox

import (
	"context"
	"fmt"
	"log/slog"
)

// netPlan is what the network policy adds to a sandbox: binds, and the
// command the agent's runs under inside.
type netPlan struct {
	binds []op
	inner []string
}

// network prepares s.Network for one process: nothing for NetNone (the
// sandbox's own loopback only).
func (s Spec) network(_ context.Context, _ *Wrapped, _ *slog.Logger) (*netPlan, error) {
	switch s.Network.Mode {
	case "", NetNone:
		return &netPlan{}, nil
	}
	return nil, fmt.Errorf("sandbox: network %q is not available yet (the egress proxy is not built in); use network: none", s.Network.Mode)
}
