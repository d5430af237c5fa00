package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/typing"
	"github.com/acpgw/gateway/workspace"
)

// Config is the whole configuration. Start from Default, or get one from
// Load. A Config from Load carries the provenance of its values and the
// precomputed per-scope policies; treat it as read-only (Policy and Explain
// do not see later changes to its fields).
type Config struct {
	// DataDir holds the SQLite store (gateway.db), the event logs (events/)
	// and the demo agent's state (demo-agent/). Default:
	// $XDG_STATE_HOME/acp-gateway, else ~/.local/state/acp-gateway, else
	// (no HOME) .acp-gateway in the working directory. A leading "~/" is
	// the home directory.
	DataDir string `koanf:"dataDir" validate:"required"`
	// Log is the gateway's own logging.
	Log Log `koanf:"log"`
	// ACP holds the settings of the agent stream.
	ACP ACP `koanf:"acp"`
	// Typing is when the typing indicator shows (package typing).
	Typing typing.Config `koanf:"typing"`
	// Abort is stop-word detection (package abort).
	Abort abort.Config `koanf:"abort"`
	// Permissions is how the agent's permission requests are answered.
	Permissions session.PermissionConfig `koanf:"permissions"`
	// Delivery is how output waits out a chat platform that cannot be
	// reached (package dispatch).
	Delivery dispatch.Config `koanf:"delivery"`
	// Busy is what a message does while a turn runs in its thread:
	// "queue" (run it after the turn, the default) or "interrupt" (cancel
	// the turn, then run it).
	Busy string `koanf:"busy" validate:"oneof=queue interrupt"`
	// Reactions are the gateway's reactions on people's messages as a
	// status (⏳ queued, 👀 taken, ✅ ❌ ⏹️ at the turn's end, ⚠️
	// stalled), where the platform has reactions.
	Reactions session.Reactions `koanf:"reactions"`
	// Budgets stop a turn when reached (tokens per turn, cost per thread,
	// cost per channel per day); the thread's next prompt then waits for
	// an approver's Continue.
	Budgets session.Budgets `koanf:"budgets"`
	// Agents are the ACP agents threads can use.
	Agents Agents `koanf:"agents"`
	// Threads is when idle threads leave memory (package session).
	Threads session.Threads `koanf:"threads"`
	// Context is what the agent is told of a thread it joins: the
	// messages before the bot was mentioned there (context.backfill).
	Context session.Context `koanf:"context"`
	// Workspace is how long a thread's own workspace is kept
	// (agents.list.NAME.workspace; package workspace).
	Workspace workspace.Config `koanf:"workspace"`
	// EventLog is the raw NDJSON log of every agent's frames. Its dir
	// defaults to DataDir/events; Load fills it in.
	EventLog eventlog.Config `koanf:"eventLog"`
	// Access is who may use the gateway, per platform (the keys are the
	// platforms' names). A platform without a rule denies everyone except
	// where the platform is open by design (a local chat).
	Access map[string]session.AccessRule `koanf:"access"`
	// Channels configures the chat platforms.
	Channels Channels `koanf:"channels"`
	// Metrics is the local HTTP endpoint for /healthz, /readyz and /metrics.
	Metrics Metrics `koanf:"metrics"`
	// Cluster is where the NATS cluster of gateway edge and gateway
	// worker is (package cluster); gateway run ignores it.
	Cluster cluster.Config `koanf:"cluster"`
	// Overrides change acp.stream, typing, busy, permissions and agent
	// per platform, space of the platform, and channel.
	Overrides Overrides `koanf:"overrides"`

	res *resolved // set by Load; nil for a Config built by hand
}

// Log is the log section.
type Log struct {
	// Level is the lowest level logged: debug, info (default), warn or
	// error.
	Level string `koanf:"level" validate:"oneof=debug info warn error"`
	// Format is "text" (default, logfmt-like) or "json".
	Format string `koanf:"format" validate:"oneof=text json"`
}

// SlogLevel returns Level as a slog.Level (info for an unknown level). It
// does no I/O.
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// ACP is the acp section.
type ACP struct {
	// Stream is acp.stream: what of the agent's stream people see.
	Stream projector.Settings `koanf:"stream"`
}

// Agents is the agents section.
type Agents struct {
	// Default names the agent of new threads: an entry of List, or
	// "demo" (the built-in scripted agent, the default).
	Default string `koanf:"default" validate:"required"`
	// IdleTimeout stops an agent process idle this long; its session
	// resumes on the next message. 0 means never; at most 24h (default
	// 30m).
	IdleTimeout time.Duration `koanf:"idleTimeout" validate:"min=0,max=24h"`
	// MaxProcesses caps concurrent agent processes: 1 to 256 (default 8).
	MaxProcesses int `koanf:"maxProcesses" validate:"min=1,max=256"`
	// StopGrace is how long a stopping agent may take to exit before it
	// is signalled: 100ms to 1m (default 3s).
	StopGrace time.Duration `koanf:"stopGrace" validate:"min=100ms,max=1m"`
	// StartTimeout is how long an agent may take to start (initialize
	// and its session) before the prompt is given up and the agent
	// stopped: 5s to 30m (default 2m; npx may download the agent first).
	StartTimeout time.Duration `koanf:"startTimeout" validate:"min=5s,max=30m"`
	// StallTimeout is how long the agent of a running turn may give no
	// output before the thread is told, once per silence, that "stop"
	// cancels the turn: 0 (never) to 24h (default 5m).
	StallTimeout time.Duration `koanf:"stallTimeout" validate:"min=0,max=24h"`
	// Sandbox is how agent processes are confined: "auto" (the default:
	// the best sandbox this machine has, today bubblewrap), "bwrap"
	// (bubblewrap) or "off" (agents run as the gateway's own user). Where
	// no sandbox can be had the gateway refuses to start unless it is off
	// (package sandbox).
	Sandbox string `koanf:"sandbox" validate:"oneof=auto bwrap off"`
	// List holds the agents by name (letters, digits, "-" and "_"). An
	// entry named "demo" replaces the built-in demo agent.
	List map[string]AgentSpec `koanf:"list" validate:"dive"`
}

// AgentSpec is one entry of agents.list.
type AgentSpec struct {
	// Command is the program and its arguments. From the environment or
	// --set, a comma-separated list.
	Command []string `koanf:"command" validate:"required,min=1,dive,required"`
	// Env holds environment variables set for the agent. Values are
	// masked by Redacted and are normally ${VAR} references. A value whose
	// name looks secret (SecretEnvNames: *_KEY, *_TOKEN, *_SECRET,
	// *PASSWORD*) or is listed in SecretEnv is never given to another
	// agent; other values (a base URL, a CA path) may be shared. An agent
	// does not inherit the gateway's environment: it gets only
	// agent.BaseEnv (PATH, HOME, locale, proxies ...), InheritEnv and Env.
	Env map[string]string `koanf:"env" secret:"true"`
	// SecretEnv names further entries of Env whose values are secrets
	// that no other agent may get (a trailing "*" matches any suffix), for
	// a credential whose name does not look like one (AUTH_HEADER).
	SecretEnv []string `koanf:"secretEnv"`
	// InheritEnv names further variables of the gateway's environment the
	// agent gets (a trailing "*" matches any suffix, as in npm_config_*).
	// The gateway's own secrets never pass, even when listed: its tokens,
	// other agents' env values, the platforms' usual token variables
	// and GATEWAY_*.
	InheritEnv []string `koanf:"inheritEnv"`
	// Cwd is the agent's working directory ("" = the gateway's).
	Cwd string `koanf:"cwd"`
	// AuthMethod is the id of the ACP authentication method to use when
	// the agent requires one ("" = the first the agent offers).
	AuthMethod string `koanf:"authMethod"`
	// Workspace is where the agent's threads work: "shared" (its cwd,
	// the default), "dir" (a directory per thread) or "worktree" (a git
	// worktree per thread of the repository at its cwd, on a branch
	// acp/NAME of its own).
	Workspace string `koanf:"workspace" validate:"omitempty,oneof=shared dir worktree"`
	// WorkspaceDir is where a thread's directory or worktree goes, with
	// {platform}, {channel} and {thread} filled in ("" =
	// workspace.DefaultTemplate under dataDir; a relative path is under
	// dataDir).
	WorkspaceDir string `koanf:"workspaceDir"`
	// MCP gives the agent the gateway's MCP server (tools send_file,
	// send_message, read_thread acting on the thread) in session/new and
	// session/load; false keeps it out (default true).
	MCP *bool `koanf:"mcp"`
	// Network is where the sandboxed agent may connect: "full" (the
	// default: anywhere outside this host, through the gateway's egress
	// proxy; the host itself only where Allow lists it), "allow" (only
	// the Allow entries) or "none" (nowhere). The gateway's own
	// listeners are never reached.
	Network string `koanf:"network" validate:"omitempty,oneof=full none allow"`
	// Allow lists host:port destinations the agent reaches (network:
	// allow; with full, the only way to this host's own addresses).
	Allow []string `koanf:"allow"`
	// Sandbox is what the agent's sandbox shows besides its workspace.
	Sandbox AgentSandbox `koanf:"sandbox"`
}

// AgentSandbox is agents.list.NAME.sandbox.
type AgentSandbox struct {
	// Home is the agent's own directory, read-write and its $HOME (""
	// = dataDir/agent-home/NAME). Its login (~/.claude, ~/.codex) goes
	// there.
	Home string `koanf:"home"`
	// ReadOnly and ReadWrite list more absolute paths the agent sees (a
	// toolchain, a cache); a missing one is left out. The gateway's data
	// directory, configuration file and event logs stay hidden even
	// inside them.
	ReadOnly  []string `koanf:"readOnly"`
	ReadWrite []string `koanf:"readWrite"`
}

// Metrics is the metrics section.
type Metrics struct {
	// Listen is the host:port serving /healthz, /readyz and /metrics (default
	// 127.0.0.1:9464); "" disables the endpoint.
	Listen string `koanf:"listen"`
}

// DemoAgent is the name of the built-in demo agent.
const DemoAgent = "demo"

// Defaults of the settings this package owns.
const (
	DefaultMetricsListen = "127.0.0.1:9464"
	DefaultIdleTimeout   = 30 * time.Minute
	DefaultMaxProcesses  = 8
	DefaultStopGrace     = 3 * time.Second
	DefaultStartTimeout  = 2 * time.Minute
	DefaultCatchUp       = 24 * time.Hour
	DefaultStallTimeout  = 5 * time.Minute
)

// Default returns the documented defaults, with the sections of the
// platforms given. DataDir and EventLog.Dir come from the process
// environment (XDG_STATE_HOME, HOME); Load uses LoadOptions.Environ
// instead.
func Default(platforms ...Platform) Config {
	getenv := lookupIn(os.Environ())
	c := defaults(getenv, platforms)
	c.resolvePaths(getenv)
	return c
}

func defaults(getenv func(string) (string, bool), platforms []Platform) Config {
	ch := Channels{CatchUp: DefaultCatchUp}
	for _, p := range platforms {
		ch.sections = append(ch.sections, section{name: p.Name, s: p.Defaults})
	}
	return Config{
		DataDir:     defaultDataDir(getenv),
		Log:         Log{Level: "info", Format: "text"},
		ACP:         ACP{Stream: projector.DefaultSettings()},
		Typing:      typing.DefaultConfig(),
		Abort:       abort.DefaultConfig(),
		Permissions: session.DefaultPermissionConfig(),
		Delivery:    dispatch.DefaultConfig(),
		Busy:        thread.BusyQueue,
		Reactions:   session.DefaultReactions(),
		Agents: Agents{
			Default:      DemoAgent,
			IdleTimeout:  DefaultIdleTimeout,
			MaxProcesses: DefaultMaxProcesses,
			StopGrace:    DefaultStopGrace,
			StartTimeout: DefaultStartTimeout,
			StallTimeout: DefaultStallTimeout,
			Sandbox:      "auto",
		},
		Threads:   session.DefaultThreads(),
		Context:   session.DefaultContext(),
		Workspace: workspace.DefaultConfig(),
		EventLog:  eventlog.DefaultConfig(),
		Channels:  ch,
		Metrics:   Metrics{Listen: DefaultMetricsListen},
		Cluster:   cluster.DefaultConfig(),
		Overrides: newOverrides(ch.sections),
	}
}

// defaultDataDir is $XDG_STATE_HOME/acp-gateway (an absolute
// XDG_STATE_HOME only, as the XDG spec asks), else
// ~/.local/state/acp-gateway, else (no home either) .acp-gateway in the
// working directory.
func defaultDataDir(getenv func(string) (string, bool)) string {
	if d, ok := getenv("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "acp-gateway")
	}
	if h := home(getenv); h != "" {
		return filepath.Join(h, ".local", "state", "acp-gateway")
	}
	return ".acp-gateway"
}

func home(getenv func(string) (string, bool)) string {
	h, _ := getenv("HOME")
	return h
}

// resolvePaths fills the derived paths: "~/" in DataDir, and EventLog.Dir
// from DataDir when empty.
func (c *Config) resolvePaths(getenv func(string) (string, bool)) {
	if rest, ok := strings.CutPrefix(c.DataDir, "~/"); ok {
		if h := home(getenv); h != "" {
			c.DataDir = filepath.Join(h, rest)
		}
	}
	if c.EventLog.Dir == "" && c.DataDir != "" {
		c.EventLog.Dir = filepath.Join(c.DataDir, "events")
	}
}

// lookupIn returns a lookup function over environ ("K=V" entries; the last
// one wins).
func lookupIn(environ []string) func(string) (string, bool) {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}
