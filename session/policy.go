package session

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/thread"
)

// machineConfig is what the machine needs of policy and the limits.
func (r *Router) machineConfig(policy Policy) thread.MachineConfig {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.machineConfigLocked(policy)
}

// machineConfigLocked is machineConfig with r.mu held.
func (r *Router) machineConfigLocked(policy Policy) thread.MachineConfig {
	grace := r.o.Abort.Grace
	return thread.MachineConfig{
		Busy:            policy.Busy,
		Grace:           grace,
		StartTimeout:    r.startTimeout(),
		IdleTimeout:     r.o.Limits.IdleTimeout,
		Permissions:     policy.Permissions.Policy,
		StallTimeout:    r.o.Limits.StallTimeout,
		EvictAfter:      r.o.Threads.EvictAfter,
		Reactions:       policy.Reactions.On(),
		ReactStallAfter: policy.Reactions.StallAfter,
	}
}

func (r *Router) policyFor(ref channels.ThreadRef, space string) Policy {
	r.mu.Lock()
	f := r.policy
	r.mu.Unlock()
	return f(ref, space)
}
