package session

import (
	"context"
	"time"
)

// SweepWorkspaces runs the hourly sweep of idle threads' workspaces once,
// at now.
func (r *Router) SweepWorkspaces(ctx context.Context, now time.Time) { r.sweepOnce(ctx, now) }
