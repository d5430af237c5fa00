package owner

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

// Deps is everything a thread uses of the gateway around it, one value
// the router gives each thread it makes (Router.deps): the options that
// do not change while the gateway runs, and its host for what does. A
// thread reaches no router state but through them and takes no router
// lock.
type Deps struct {
	// ctx is the Run context: its values, and its end at shutdown.
	Ctx   context.Context
	Log   *slog.Logger
	Store store.Backend
	// wg owns every goroutine a thread starts (Router.shutdown waits).
	WG *sync.WaitGroup
	// closingLogs are the event logs being closed (framelog.go).
	ClosingLogs *ClosingLogs

	Limits         Limits
	Delivery       dispatch.Config
	EvictAfter     time.Duration
	MCPDir         string
	MCPCommand     string
	Registry       *agent.Registry
	Workspaces     *workspace.Manager
	Observer       func(platform string) dispatch.Observer
	OnUpdate       func(tag, suppressed string)
	OnTurnEnd      func(channels.ThreadRef, projector.TurnEnd)
	OnTurnFinished func(t channels.ThreadRef, stopReason string, err error)

	Host Host
}

// Host is what a thread asks of the router it belongs to (*Router is
// the one): the settings a reload changes, the process slots, the
// registry of threads, the store work that spans threads, and the answers
// to a command's autocomplete (which are no thread's messages). Each method takes the router's lock itself.
type Host interface {
	PolicyFor(ref channels.ThreadRef, space string) Policy
	MachineConfig(Policy) thread.MachineConfig
	AgentSpec(name string) (agent.Spec, bool)
	AgentWorkspace() func(name string) workspace.Agent
	Cwd(agent.Spec) string
	ShutdownGrace() time.Duration
	KeepsSeen(channels.Inbound) bool

	// The process slots: acquire may reap another thread's idle agent.
	Acquire(ctx context.Context, t *Thread) error
	Release()
	GiveWay()
	// Evict drops t from the registry unless an event came meanwhile.
	Evict(t *Thread) bool
	// Enter registers a goroutine the router owns (false once closing);
	// Closing reports whether the router is shutting down.
	Enter() bool
	Closing() bool
	AgentEvent(ref channels.ThreadRef, event string)

	Retake(ref channels.ThreadRef, in channels.Inbound) *Retaken

	AnswerSuggest(in channels.Inbound, opts []channels.Option)
	OpenFrameLog(sessionID string) (FrameLog, error)
	FlushSaves(ctx context.Context)
	ClaimSession(ctx context.Context, ref channels.ThreadRef, agentName, id string) sysmsg.Notice
	ShowWorkspace(ctx context.Context, ref channels.ThreadRef) sysmsg.WorkspaceShown
	ShowDiff(ctx context.Context, ref channels.ThreadRef, limit int) (sysmsg.DiffShown, string)
}
