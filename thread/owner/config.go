package owner

import (
	"time"

	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/typing"
)

// Policy is what a thread's channel settles for one turn. Settings from the
// configuration file are resolved per thread (the most specific override
// wins) by the caller's Options.Policy.
type Policy struct {
	// Stream is the acp.stream section.
	Stream projector.Settings
	// Typing is the typing section.
	Typing typing.Config
	// Busy is BusyQueue or BusyInterrupt.
	Busy string
	// Permissions is the permission policy and timeout.
	Permissions PermissionConfig
	// Agent names the agent that new threads here start ("" = the
	// default). A thread keeps the agent it was bound to.
	Agent string
	// Agents are the agents a new thread here may pick
	// (channels.Inbound.Agent); empty: any the router can start.
	Agents []string
	// Reactions is the reactions section.
	Reactions Reactions
	// Budgets are the budgets section.
	Budgets Budgets
	// Context is the context section: what the agent is told of a
	// thread it joins.
	Context Context
}

// Context is the context section.
type Context struct {
	// Backfill is what a thread said before the bot was first mentioned
	// in it, put before the first prompt.
	Backfill Backfill `koanf:"backfill"`
}

// Backfill bounds the messages of a thread read for its first prompt
// when the bot is mentioned in a thread not yet bound (on platforms that
// can read a thread's history): the last Messages messages (0: none, at
// most 200; default 30), at most Chars characters of text in all (at
// most 100,000; default 8,000), the newest kept.
type Backfill struct {
	Messages int `koanf:"messages" validate:"min=0,max=200"`
	Chars    int `koanf:"chars" validate:"min=0,max=100000"`
}

// DefaultContext returns the documented defaults.
func DefaultContext() Context { return Context{Backfill: Backfill{Messages: 30, Chars: 8000}} }

// PermissionConfig is the permissions section.
type PermissionConfig struct {
	// Policy is one of ask, approve-reads, approve-all, deny-all.
	Policy string `koanf:"policy" validate:"oneof=ask approve-reads approve-all deny-all"`
	// Timeout is how long a prompt waits for an answer before the agent
	// gets the reject option (10s to 24h; default 10m).
	Timeout time.Duration `koanf:"timeout" validate:"min=10s,max=24h"`
}

// DefaultPermissionConfig returns the documented defaults.
func DefaultPermissionConfig() PermissionConfig {
	return PermissionConfig{Policy: thread.PermissionAsk, Timeout: 10 * time.Minute}
}

// DefaultPolicy returns the defaults of every setting.
func DefaultPolicy() Policy {
	return Policy{
		Stream:      projector.DefaultSettings(),
		Typing:      typing.DefaultConfig(),
		Busy:        thread.BusyQueue,
		Permissions: DefaultPermissionConfig(),
		Reactions:   DefaultReactions(),
		Context:     DefaultContext(),
	}
}

// AccessRule is who may use the gateway on one platform (access.<platform>
// in YAML). Lists are of platform ids. A platform with no rule at all
// denies everyone, except platforms the caller declares open: those admit
// people themselves (the web chat, by token), and a rule there only
// narrows who may prompt and approve.
type AccessRule struct {
	// Guilds (Discord) or Workspaces (Slack) allowed; empty: any.
	Guilds     []string `koanf:"guilds"`
	Workspaces []string `koanf:"workspaces"`
	// Channels allowed; empty: any channel of the allowed guilds or
	// workspaces.
	Channels []string `koanf:"channels"`
	// Users and Roles (Discord roles, or Slack user groups as
	// UserGroups) who may prompt and stop. When both are empty, anyone in
	// the allowed channels may.
	Users      []string `koanf:"users"`
	Roles      []string `koanf:"roles"`
	UserGroups []string `koanf:"userGroups"`
	// Approvers (user, role or user group ids) may answer permission
	// prompts; empty: whoever may prompt.
	Approvers []string `koanf:"approvers"`
	// Operators (user, role or user group ids) may change a thread's
	// session: /new, /model, /mode, /effort, /set; empty: the approvers.
	Operators []string `koanf:"operators"`
	// AllowBots lets other bots prompt (default false: they are ignored).
	AllowBots bool `koanf:"allowBots"`
}

// Limits of the runtime.
type Limits struct {
	// MaxProcesses caps concurrent agent processes; beyond it the
	// least recently used idle one is stopped, or the message waits in
	// line for a slot (first come, first served across threads), and the
	// thread is told its place.
	MaxProcesses int
	// IdleTimeout stops an agent process that has been idle this long;
	// its session resumes on the next message. Zero: never.
	IdleTimeout time.Duration
	// StopGrace is how long a stopped agent process may take to exit
	// before it is signalled.
	StopGrace time.Duration
	// StartTimeout bounds an agent's start (initialize and its session);
	// past it the prompt is given up. Zero: two minutes.
	StartTimeout time.Duration
	// StallTimeout is how long the agent of a running turn may say
	// nothing before the thread is told it can stop the turn (once per
	// silence). Zero: never.
	StallTimeout time.Duration
	// ShutdownGrace bounds what a shutdown posts and edits in each thread
	// (the interrupted turn's notice, expired permission prompts). Zero:
	// five seconds.
	ShutdownGrace time.Duration
}
