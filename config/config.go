package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/typing"
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
	// Agents are the ACP agents threads can use.
	Agents Agents `koanf:"agents"`
	// Threads is when idle threads leave memory (package session).
	Threads session.Threads `koanf:"threads"`
	// EventLog is the raw NDJSON log of every agent's frames. Its dir
	// defaults to DataDir/events; Load fills it in.
	EventLog eventlog.Config `koanf:"eventLog"`
	// Access is who may use the gateway, per platform: the keys are
	// "web", "discord" and "slack". A platform without a rule denies
	// everyone except where the platform is open by design (the local web
	// chat).
	Access map[string]session.AccessRule `koanf:"access"`
	// Channels configures the chat platforms.
	Channels Channels `koanf:"channels"`
	// Metrics is the local HTTP endpoint for /healthz, /readyz and /metrics.
	Metrics Metrics `koanf:"metrics"`
	// Overrides change acp.stream, typing, busy and permissions per
	// platform, guild or workspace, and channel.
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
	// secrets (masked by Redacted, and never given to another agent) and
	// are normally ${VAR} references. An agent does not inherit the
	// gateway's environment: it gets only agent.BaseEnv (PATH, HOME,
	// locale, proxies ...), InheritEnv and Env.
	Env map[string]string `koanf:"env" secret:"true"`
	// InheritEnv names further variables of the gateway's environment the
	// agent gets (a trailing "*" matches any suffix, as in npm_config_*).
	// The gateway's own secrets never pass, even when listed: its tokens,
	// other agents' env values, DISCORD_TOKEN, SLACK_*_TOKEN and GATEWAY_*.
	InheritEnv []string `koanf:"inheritEnv"`
	// Cwd is the agent's working directory ("" = the gateway's).
	Cwd string `koanf:"cwd"`
	// AuthMethod is the id of the ACP authentication method to use when
	// the agent requires one ("" = the first the agent offers).
	AuthMethod string `koanf:"authMethod"`
}

// Channels is the channels section: one subsection per platform.
type Channels struct {
	// Web is the local web chat.
	Web Web `koanf:"web"`
	// Discord is the Discord bot.
	Discord Discord `koanf:"discord"`
	// Slack is the Slack app (Socket Mode).
	Slack Slack `koanf:"slack"`
	// CatchUp: at start, the Discord and Slack threads active within
	// this long are read from the last message seen, and what people
	// wrote while the gateway was down is answered in order (0 turns it
	// off; at most 30 days).
	CatchUp time.Duration `koanf:"catchUp" validate:"min=0,max=720h"`
}

// Web is the local web chat (channels.web).
type Web struct {
	// Enabled turns the web chat on (true) or off (false). Unset (null),
	// it is on exactly when no other platform is configured.
	Enabled *bool `koanf:"enabled"`
	// Listen is the host:port the web chat serves on (default
	// 127.0.0.1:8484).
	Listen string `koanf:"listen"`
	// Token, when set, admits its holder, one person whose id for
	// access rules is web:owner (a secret; normally ${WEB_TOKEN}).
	Token string `koanf:"token" secret:"true"`
	// Users maps names (letters, digits, "-" and "_") to tokens: each
	// token admits one person, whose id for access rules is web:<name> and
	// whose name is shown as the author (secrets; normally
	// ${ANN_TOKEN}). Without Token and Users the web chat serves only on
	// loopback, where everyone is the one local user, web:local.
	Users map[string]string `koanf:"users" secret:"true"`
}

// Web chat identities, as channels/web gives them (cmd/gateway checks
// that both agree).
const (
	// WebOwner is the id of the holder of channels.web.token.
	WebOwner = "web:owner"
	// WebLocal is the id of everyone on a loopback web chat without
	// tokens.
	WebLocal = "web:local"
	// webUserPrefix starts the id of a named token's holder.
	webUserPrefix = "web:"
)

// Identities returns the ids the web chat gives people, sorted: web:<name>
// for each of Users, web:owner with Token, web:local with neither. Access
// rules (access.web) can name only these.
func (w Web) Identities() []string {
	var ids []string
	for name := range w.Users {
		ids = append(ids, webUserPrefix+name)
	}
	if w.Token != "" {
		ids = append(ids, WebOwner)
	}
	if len(ids) == 0 {
		ids = append(ids, WebLocal)
	}
	slices.Sort(ids)
	return ids
}

// Discord is the Discord bot (channels.discord). It is configured when
// Token is set.
type Discord struct {
	// Token is the bot token (a secret; normally "${DISCORD_TOKEN}").
	Token string `koanf:"token" secret:"true"`
	// APIBaseURL is where the Discord API is (default
	// https://discord.com; tests point it at a fake server).
	APIBaseURL string `koanf:"apiBaseURL"`
	// DMs lets people talk to the bot in direct messages.
	DMs bool `koanf:"dms"`
}

// Slack is the Slack app (channels.slack). It is configured when both
// tokens are set.
type Slack struct {
	// AppToken is the app-level token for Socket Mode (a secret starting
	// with "xapp-").
	AppToken string `koanf:"appToken" secret:"true"`
	// BotToken is the bot token for the Web API (a secret starting with
	// "xoxb-").
	BotToken string `koanf:"botToken" secret:"true"`
	// APIURL is the Web API base URL (default https://slack.com/api/). A
	// missing trailing "/" is added.
	APIURL string `koanf:"apiURL"`
}

// Metrics is the metrics section.
type Metrics struct {
	// Listen is the host:port serving /healthz, /readyz and /metrics (default
	// 127.0.0.1:9464); "" disables the endpoint.
	Listen string `koanf:"listen"`
}

// Platform names, as used in access, overrides and Scope.
const (
	PlatformWeb     = "web"
	PlatformDiscord = "discord"
	PlatformSlack   = "slack"
)

// platforms lists the platform names in their documented order.
var platforms = []string{PlatformWeb, PlatformDiscord, PlatformSlack}

// DemoAgent is the name of the built-in demo agent.
const DemoAgent = "demo"

// Defaults of the settings this package owns.
const (
	DefaultWebListen         = "127.0.0.1:8484"
	DefaultMetricsListen     = "127.0.0.1:9464"
	DefaultDiscordAPIBaseURL = "https://discord.com"
	DefaultSlackAPIURL       = "https://slack.com/api/"
	DefaultIdleTimeout       = 30 * time.Minute
	DefaultMaxProcesses      = 8
	DefaultStopGrace         = 3 * time.Second
	DefaultStartTimeout      = 2 * time.Minute
	DefaultCatchUp           = 24 * time.Hour
	DefaultStallTimeout      = 5 * time.Minute
)

// Default returns the documented defaults. DataDir and EventLog.Dir come
// from the process environment (XDG_STATE_HOME, HOME); Load uses
// LoadOptions.Environ instead.
func Default() Config {
	getenv := lookupIn(os.Environ())
	c := defaults(getenv)
	c.resolvePaths(getenv)
	return c
}

func defaults(getenv func(string) (string, bool)) Config {
	return Config{
		DataDir:     defaultDataDir(getenv),
		Log:         Log{Level: "info", Format: "text"},
		ACP:         ACP{Stream: projector.DefaultSettings()},
		Typing:      typing.DefaultConfig(),
		Abort:       abort.DefaultConfig(),
		Permissions: session.DefaultPermissionConfig(),
		Delivery:    dispatch.DefaultConfig(),
		Busy:        session.BusyQueue,
		Agents: Agents{
			Default:      DemoAgent,
			IdleTimeout:  DefaultIdleTimeout,
			MaxProcesses: DefaultMaxProcesses,
			StopGrace:    DefaultStopGrace,
			StartTimeout: DefaultStartTimeout,
			StallTimeout: DefaultStallTimeout,
		},
		Threads:  session.DefaultThreads(),
		EventLog: eventlog.DefaultConfig(),
		Channels: Channels{
			Web:     Web{Listen: DefaultWebListen},
			Discord: Discord{APIBaseURL: DefaultDiscordAPIBaseURL},
			Slack:   Slack{APIURL: DefaultSlackAPIURL},
			CatchUp: DefaultCatchUp,
		},
		Metrics: Metrics{Listen: DefaultMetricsListen},
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
