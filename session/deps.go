package session

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/workspace"
)

// deps is everything a thread uses of the gateway around it, one value
// the router gives each thread it makes (Router.deps): the options that
// do not change while the gateway runs, and its host for what does. A
// thread reaches no router state but through them and takes no router
// lock.
type deps struct {
	// ctx is the Run context: its values, and its end at shutdown.
	ctx   context.Context
	log   *slog.Logger
	store store.Backend
	// wg owns every goroutine a thread starts (Router.shutdown waits).
	wg *sync.WaitGroup
	// closingLogs are the event logs being closed (framelog.go).
	closingLogs *closingLogs

	limits         Limits
	delivery       dispatch.Config
	evictAfter     time.Duration
	mcpDir         string
	mcpCommand     string
	registry       *agent.Registry
	workspaces     *workspace.Manager
	observer       func(platform string) dispatch.Observer
	onUpdate       func(tag, suppressed string)
	onTurnEnd      func(channels.ThreadRef, projector.TurnEnd)
	onTurnFinished func(t channels.ThreadRef, stopReason string, err error)

	host host
}

// host is what a thread asks of the router it belongs to (*Router is
// the one): the settings a reload changes, the process slots, the
// registry of threads, the store work that spans threads, and answers
// outside a thread's lane. Each method takes the router's lock itself.
type host interface {
	policyFor(ref channels.ThreadRef, space string) Policy
	machineConfig(Policy) thread.MachineConfig
	agentSpec(name string) (agent.Spec, bool)
	agentWorkspace() func(name string) workspace.Agent
	cwd(agent.Spec) string
	shutdownGrace() time.Duration
	keepsSeen(channels.Inbound) bool

	// The process slots: acquire may reap another thread's idle agent.
	acquire(ctx context.Context, t *liveThread) error
	release()
	giveWay()
	// evict drops t from the registry unless an event came meanwhile.
	evict(t *liveThread) bool
	// enter registers a goroutine the router owns (false once closing);
	// closing reports whether the router is shutting down.
	enter() bool
	closing() bool
	agentEvent(ref channels.ThreadRef, event string)

	retaking(ref channels.ThreadRef, in channels.Inbound) bool
	retake(ref channels.ThreadRef, in channels.Inbound) *retaken

	replyWithin(within context.Context, ad channels.Adapter, in channels.Inbound, n sysmsg.Notice)
	answerSuggest(in channels.Inbound, opts []channels.Option)
	openFrameLog(sessionID string) (FrameLog, error)
	persist(ctx context.Context, th channels.ThreadRef, what string, write func(context.Context) error) error
	flushSaves(ctx context.Context)
	claimSession(ctx context.Context, ref channels.ThreadRef, agentName, id string) sysmsg.Notice
	showWorkspace(ctx context.Context, ref channels.ThreadRef) sysmsg.WorkspaceShown
	showDiff(ctx context.Context, ref channels.ThreadRef, limit int) (sysmsg.DiffShown, string)
}

// deps is what the router gives a thread it makes. The Run context is
// set: threads are made once Run started.
func (r *Router) deps() deps {
	return deps{
		ctx:            r.ctx,
		log:            r.log,
		store:          r.o.Store,
		wg:             &r.wg,
		closingLogs:    &r.closingLogs,
		limits:         r.o.Limits,
		delivery:       r.o.Delivery,
		evictAfter:     r.o.Threads.EvictAfter,
		mcpDir:         r.o.MCPDir,
		mcpCommand:     r.o.MCPCommand,
		registry:       r.o.Registry,
		workspaces:     r.o.Workspaces,
		observer:       r.o.Observer,
		onUpdate:       r.o.OnUpdate,
		onTurnEnd:      r.o.OnTurnEnd,
		onTurnFinished: r.o.OnTurnFinished,
		host:           r,
	}
}

// closing reports whether the router is shutting down.
func (r *Router) closing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}
