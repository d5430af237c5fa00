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
	if err := NetworkAvailable(s.Network.Mode); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return &netPlan{}, nil
}

// NetworkAvailable reports whether mode (a value of
// agents.list.NAME.network) can be had: an error saying why not.
func NetworkAvailable(mode string) error {
	switch mode {
	case "", NetNone:
		return nil
	}
	return fmt.Errorf("network %q is not available yet (the egress proxy is not built in); use network: none", mode)
}
