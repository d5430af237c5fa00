package session

import (
	"context"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/thread/owner"
	"github.com/acpgw/gateway/workspace"
)

// deps is what the router gives a thread it makes. The Run context is
// set: threads are made once Run started.
func (r *Router) deps() owner.Deps {
	return owner.Deps{
		Ctx:            r.ctx,
		Log:            r.log,
		Store:          r.o.Store,
		WG:             &r.wg,
		ClosingLogs:    &r.closingLogs,
		Limits:         r.o.Limits,
		Delivery:       r.o.Delivery,
		EvictAfter:     r.o.Threads.EvictAfter,
		MCPDir:         r.o.MCPDir,
		MCPCommand:     r.o.MCPCommand,
		Registry:       r.o.Registry,
		Workspaces:     r.o.Workspaces,
		Observer:       r.o.Observer,
		OnUpdate:       r.o.OnUpdate,
		OnTurnEnd:      r.o.OnTurnEnd,
		OnTurnFinished: r.o.OnTurnFinished,
		Host:           host{r},
	}
}

// closing reports whether the router is shutting down.
func (r *Router) closing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// host is the router as its threads see it (owner.Host): each method
// is the router's own, which takes the router's lock itself.
type host struct{ r *Router }

func (h host) PolicyFor(ref channels.ThreadRef, space string) Policy {
	return h.r.policyFor(ref, space)
}
func (h host) MachineConfig(p Policy) thread.MachineConfig        { return h.r.machineConfig(p) }
func (h host) AgentSpec(name string) (agent.Spec, bool)           { return h.r.agentSpec(name) }
func (h host) AgentWorkspace() func(name string) workspace.Agent  { return h.r.agentWorkspace() }
func (h host) Cwd(s agent.Spec) string                            { return h.r.cwd(s) }
func (h host) ShutdownGrace() time.Duration                       { return h.r.shutdownGrace() }
func (h host) KeepsSeen(in channels.Inbound) bool                 { return h.r.keepsSeen(in) }
func (h host) Acquire(ctx context.Context, t *owner.Thread) error { return h.r.acquire(ctx, t) }
func (h host) Release()                                           { h.r.release() }
func (h host) GiveWay()                                           { h.r.giveWay() }
func (h host) Evict(t *owner.Thread) bool                         { return h.r.evict(t) }
func (h host) Enter() bool                                        { return h.r.enter() }
func (h host) Closing() bool                                      { return h.r.closing() }
func (h host) AgentEvent(ref channels.ThreadRef, event string)    { h.r.agentEvent(ref, event) }
func (h host) Retake(ref channels.ThreadRef, in channels.Inbound) *owner.Retaken {
	return h.r.retake(ref, in)
}
func (h host) AnswerSuggest(in channels.Inbound, opts []channels.Option) { h.r.answerSuggest(in, opts) }
func (h host) OpenFrameLog(sessionID string) (FrameLog, error)           { return h.r.openFrameLog(sessionID) }
func (h host) FlushSaves(ctx context.Context)                            { h.r.FlushSaves(ctx) }
func (h host) ClaimSession(ctx context.Context, ref channels.ThreadRef, agentName, id string) sysmsg.Notice {
	return h.r.claimSession(ctx, ref, agentName, id)
}
func (h host) ShowWorkspace(ctx context.Context, ref channels.ThreadRef) sysmsg.WorkspaceShown {
	return h.r.showWorkspace(ctx, ref)
}
func (h host) ShowDiff(ctx context.Context, ref channels.ThreadRef, limit int) (sysmsg.DiffShown, string) {
	return h.r.showDiff(ctx, ref, limit)
}
