package config

import (
	"strings"
	"testing"
)

// TestErrors checks the text of every kind of problem.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  []string
		sets []string
		want []string
	}{
		{
			name: "allowed values and ranges",
			yaml: `
acp:
  stream:
    metaMode: quiet
    deliveryMode: later
    maxTurnChars: 0
    maxStatusChars: 5000
typing:
  mode: sometimes
  ttl: 48h
busy: later
permissions: {policy: maybe, timeout: 1s}
log: {level: loud, format: xml}
agents: {maxProcesses: 0, stopGrace: 5m, idleTimeout: 25h, startTimeout: 1s}
eventLog: {maxSegments: 0}
`,
			want: []string{
				`acp.stream.metaMode: must be one of off minimal verbose, got "quiet"`,
				`acp.stream.deliveryMode: must be one of live final_only, got "later"`,
				`acp.stream.maxTurnChars: must be at least 1, got 0`,
				`acp.stream.maxStatusChars: must be at most 4000, got 5000`,
				`typing.mode: must be one of instant message never, got "sometimes"`,
				`typing.ttl: must be at most 24h0m0s, got 48h0m0s`,
				`busy: must be one of queue interrupt, got "later"`,
				`permissions.policy: must be one of ask approve-reads approve-all deny-all, got "maybe"`,
				`permissions.timeout: must be at least 10s, got 1s`,
				`log.level: must be one of debug info warn error, got "loud"`,
				`log.format: must be one of text json, got "xml"`,
				`agents.maxProcesses: must be at least 1, got 0`,
				`agents.stopGrace: must be at most 1m, got 5m0s`,
				`agents.startTimeout: must be at least 5s, got 1s`,
				`agents.idleTimeout: must be at most 24h, got 25h0m0s`,
				`eventLog.maxSegments: must be at least 1, got 0`,
			},
		},
		{
			name: "unknown keys",
			yaml: `
acp: {stream: {metaMod: off}}
agents: {list: {x: {comand: [a], command: [a]}}}
access: {discord: {gilds: ["1"]}}
chanels: {}
overrides:
  discord:
    guilds: {"1234": {acp: {stream: {metaMod: off}}}}
    channels: {"5": {agents: {default: x}}}
  slack:
    gilds: {}
`,
			want: []string{
				`acp.stream.metaMod: unknown key (did you mean acp.stream.metaMode?)`,
				`agents.list.x.comand: unknown key (did you mean agents.list.x.command?)`,
				`access.discord.gilds: unknown key (did you mean access.discord.guilds?)`,
				`chanels: unknown key (did you mean channels`,
				`overrides.discord.guilds.1234.acp.stream.metaMod: unknown key (did you mean overrides.discord.guilds.1234.acp.stream.metaMode?)`,
				`overrides.discord.channels.5.agents.default: cannot be overridden (only acp.stream, typing, busy, permissions, reactions, budgets, agent and context can)`,
				`overrides.slack.gilds: unknown key`,
			},
		},
		{
			name: "an override's agent",
			yaml: `
agents: {list: {claude: {command: [claude-agent-acp]}}}
overrides:
  slack:
    channels: {C1: {agent: cladue}, C2: {agent: claude}, C3: {agent: demo}}
`,
			want: []string{
				`overrides.slack.channels.C1.agent: must name an agent of agents.list or demo (defined: demo claude), got "cladue"`,
			},
		},
		{
			name: "types",
			yaml: `
acp: {stream: {maxTurnChars: lots, showUsage: maybe, maxStatusChars: 1.5}}
typing: {ttl: 30}
agents: {list: {x: {command: {a: b}}}}
abort: 5
`,
			want: []string{
				`acp.stream.maxTurnChars: want an integer, got "lots"`,
				`acp.stream.showUsage: want true or false, got "maybe"`,
				`acp.stream.maxStatusChars: want an integer, got 1.5`,
				`typing.ttl: want a duration with a unit such as 90s, 10m or 1h30m, got 30`,
				`agents.list.x.command: want a list, got a mapping`,
				`abort: want a mapping of keys, got 5`,
			},
		},
		{
			name: "environment and --set",
			env:  []string{"GATEWAY_ACP__STREAM__METAMOD=off", "GATEWAY_NOPE=1", "GATEWAY_AGENTS__MAXPROCESSES=many"},
			sets: []string{"busy", "acp.stream.nope=1", "=x"},
			want: []string{
				`GATEWAY_ACP__STREAM__METAMOD: names no configuration key (did you mean GATEWAY_ACP__STREAM__METAMODE, which sets acp.stream.metaMode?)`,
				`GATEWAY_NOPE: names no configuration key`,
				`agents.maxProcesses: want an integer, got "many"`,
				`--set "busy": want key=value`,
				`--set "=x": want key=value`,
				`acp.stream.nope: unknown key`,
			},
		},
		{
			name: "catch-up window",
			yaml: "channels: {catchUp: 1000h}\n",
			want: []string{`channels.catchUp: must be at most 720h, got 1000h0m0s`},
		},
		{
			name: "negative catch-up window",
			yaml: "channels: {catchUp: -1h}\n",
			want: []string{`channels.catchUp: must be at least 0, got -1h0m0s`},
		},
		{
			name: "thread eviction",
			yaml: "threads: {evictAfter: 25h}\n",
			want: []string{`threads.evictAfter: must be at most 24h, got 25h0m0s`},
		},
		{
			name: "references",
			yaml: "channels: {discord: {token: '${DISCORD_TOKEN}'}}\nagents: {list: {a: {command: ['${BIN}', x]}}}\n",
			want: []string{
				`channels.discord.token: environment variable DISCORD_TOKEN is not set (referenced as ${DISCORD_TOKEN})`,
				`agents.list.a.command[0]: environment variable BIN is not set (referenced as ${BIN})`,
			},
		},
		{
			name: "cross-field",
			yaml: `
agents:
  default: claude
  list:
    codex: {command: [npx, x], env: {"1BAD": v}}
    "bad name": {command: [x]}
    empty: {command: []}
    blank: {command: [""]}
access:
  teams: {}
  slack: {guilds: ["1"], roles: ["r"]}
  discord: {workspaces: [T1], userGroups: [g]}
channels:
  web: {enabled: false, listen: "localhost"}
  slack: {appToken: "xoxb-swapped"}
  discord: {apiBaseURL: "ftp://x"}
metrics: {listen: "1.2.3.4:99999"}
`,
			want: []string{
				`agents.default: must name an agent of agents.list or demo (defined: demo bad name blank codex empty), got "claude"`,
				`agents.list.codex.env.1BAD: not an environment variable name`,
				`agents.list.bad name: an agent name has only letters, digits, - and _`,
				`agents.list.empty.command: must have at least 1 entries`,
				`agents.list.blank.command[0]: is required`,
				`access.teams: unknown platform (allowed: web discord slack)`,
				`access.slack.guilds: only for discord`,
				`access.slack.roles: only for discord`,
				`access.discord.workspaces: only for slack`,
				`access.discord.userGroups: only for slack`,
				`channels.web.listen: want host:port (such as 127.0.0.1:8484), got "localhost"`,
				`channels.slack.botToken: is required when appToken is set`,
				`channels.slack.appToken: must be an app-level token (starting with "xapp-")`,
				`channels.discord.apiBaseURL: want an http or https URL, got "ftp://x"`,
				`metrics.listen: want a port number from 0 to 65535, got "99999"`,
				`channels.web.enabled: is false and no other platform is configured`,
			},
		},
		{
			name: "overrides validate their merged result",
			yaml: `
overrides:
  discord:
    settings: {acp: {stream: {metaMode: quiet}}}
    guilds: {"1": {busy: later, permissions: {timeout: 1s}}}
    channels: {"2": {typing: {ttl: 100h}}}
  web:
    settings: {acp: {stream: {maxTurnChars: "x"}}}
`,
			want: []string{
				`overrides.discord.settings.acp.stream.metaMode: must be one of off minimal verbose, got "quiet"`,
				`overrides.discord.guilds.1.busy: must be one of queue interrupt, got "later"`,
				`overrides.discord.guilds.1.permissions.timeout: must be at least 10s, got 1s`,
				`overrides.discord.channels.2.typing.ttl: must be at most 24h0m0s, got 100h0m0s`,
				`overrides.web.settings.acp.stream.maxTurnChars: want an integer, got "x"`,
			},
		},
		{
			name: "integers that overflow are too large, not negative",
			yaml: `
agents: {maxProcesses: 99999999999999999999}
eventLog: {maxSegments: 10000000000000000000, maxSegmentBytes: -99999999999999999999}
acp: {stream: {maxTurnChars: 9223372036854775808}}
`,
			want: []string{
				`agents.maxProcesses: too large: want an integer of at most 9223372036854775807, got 1e+20`,
				`eventLog.maxSegments: too large: want an integer of at most 9223372036854775807, got 10000000000000000000`,
				`eventLog.maxSegmentBytes: too small: want an integer of at least -9223372036854775808, got -1e+20`,
				`acp.stream.maxTurnChars: too large: want an integer of at most 9223372036854775807, got 9223372036854775808`,
			},
		},
		{
			name: "integers that overflow from the environment and --set",
			env:  []string{"GATEWAY_AGENTS__MAXPROCESSES=99999999999999999999"},
			sets: []string{"eventLog.maxSegments=-99999999999999999999"},
			want: []string{
				`agents.maxProcesses: too large: want an integer of at most 9223372036854775807, got 99999999999999999999`,
				`eventLog.maxSegments: too small: want an integer of at least -9223372036854775808, got -99999999999999999999`,
			},
		},
		{
			name: "a command written as one string",
			yaml: `
agents:
  list:
    x: {command: "npx -y foo"}
    y: {command: "  claude-agent-acp --verbose "}
    z: {command: single-word}
`,
			want: []string{
				`agents.list.x.command: must be a list such as [npx, -y, foo], got the string "npx -y foo"`,
				`agents.list.y.command: must be a list such as [claude-agent-acp, --verbose], got the string "  claude-agent-acp --verbose "`,
			},
		},
		{
			name: "inheritEnv names",
			yaml: `
agents:
  list:
    x: {command: [x], inheritEnv: [GOOD, npm_config_*, "1BAD", "A-B", "*"]}
`,
			want: []string{
				`agents.list.x.inheritEnv[2]: not an environment variable name (letters, digits and _, not starting with a digit; a trailing * matches any suffix), got "1BAD"`,
				`agents.list.x.inheritEnv[3]: not an environment variable name (letters, digits and _, not starting with a digit; a trailing * matches any suffix), got "A-B"`,
				`agents.list.x.inheritEnv[4]: not an environment variable name (letters, digits and _, not starting with a digit; a trailing * matches any suffix), got "*"`,
			},
		},
		{
			name: "agent workspaces",
			yaml: `
agents:
  list:
    x: {command: [x], workspace: worktrees}
    y: {command: [y], workspace: dir, workspaceDir: "/srv/ws/{platform}"}
    z: {command: [z], workspace: dir, workspaceDir: "/srv/{user}/{thread}"}
workspace:
  keep: -1h
`,
			want: []string{
				`agents.list.x.workspace: must be one of shared dir worktree, got "worktrees"`,
				`agents.list.y.workspaceDir: must contain {thread}, or every thread would share one directory (allowed placeholders: {platform} {channel} {thread}), got "/srv/ws/{platform}"`,
				`agents.list.z.workspaceDir: unknown placeholder {user} (allowed: {platform} {channel} {thread})`,
				`workspace.keep: must be at least 0, got -1h0m0s`,
			},
		},
		{
			name: "web chat beyond loopback without a token",
			yaml: "channels: {web: {listen: \"0.0.0.0:8484\"}}\n",
			want: []string{
				`channels.web.listen: "0.0.0.0:8484" is reachable beyond this machine, and no token is set: set channels.web.token or channels.web.users so that only token holders get in, or listen on 127.0.0.1 (where the gateway makes a token, or channels.web.open serves without one)`,
			},
		},
		{
			name: "web chat open beyond loopback",
			yaml: "channels: {web: {listen: \"0.0.0.0:8484\", open: true}}\n",
			want: []string{
				`channels.web.listen: "0.0.0.0:8484" is reachable beyond this machine, and no token is set`,
			},
		},
		{
			name: "web chat open with a token",
			yaml: "channels: {web: {open: true, token: tok, users: {ann: ann-tok}}}\n",
			want: []string{
				`channels.web.open: true serves the chat without a token, but channels.web.token or channels.web.users is set: remove open, or the tokens`,
			},
		},
		{
			name: "web chat tokens and the ids access.web names",
			yaml: `
channels:
  web:
    listen: "0.0.0.0:8484"
    token: same-token
    users:
      ann: ann-token
      bob: same-token
      carol: ""
      owner: owner-token
      "d e": de-token
access:
  web:
    users: [web:ann, web:boss]
    approvers: [ann]
`,
			want: []string{
				`channels.web.users.bob: has the same token as channels.web.token; each person needs a token of their own`,
				`channels.web.users.carol: the token is empty; give each person a token of their own (normally ${CAROL_TOKEN})`,
				`channels.web.users.owner: "owner" is reserved (web:owner is the id of channels.web.token's holder); choose another name`,
				`channels.web.users.d e: a name has only letters, digits, - and _`,
				`access.web.users[1]: "web:boss" is not a web chat identity; people there are who their token says (channels.web.users NAME: web:NAME, channels.web.token: web:owner, no token on loopback: web:local), here: web:ann web:bob web:carol web:d e web:owner`,
				`access.web.approvers[0]: "ann" is not a web chat identity;`,
			},
		},
		{
			name: "bad YAML keys",
			yaml: "agents: {list: {a.b: {command: [x]}}}\n",
			want: []string{`agents.list: key "a.b" must not contain "."`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml, tc.env, tc.sets...)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q; got:\n%s", want, msg)
				}
			}
			if got, want := strings.Count(msg, "\n")+1, len(tc.want); got != want {
				t.Errorf("got %d problems, want %d:\n%s", got, want, msg)
			}
		})
	}
}

// TestBaseErrorsNotRepeatedInOverrides: a bad base value is reported once,
// not again for every override merged over it.
func TestBaseErrorsNotRepeatedInOverrides(t *testing.T) {
	_, err := load(t, `
busy: later
overrides:
  discord:
    settings: {typing: {mode: message}}
    guilds: {"1": {acp: {stream: {metaMode: off}}}}
`, nil)
	if err == nil {
		t.Fatal("no error")
	}
	if got, want := err.Error(), `busy: must be one of queue interrupt, got "later"`; got != want {
		t.Errorf("err = %q, want %q", got, want)
	}
}

func TestBadYAML(t *testing.T) {
	for _, y := range []string{"a: [", "- a\n- b\n", "a: 1\na: 2\n"} {
		if _, err := load(t, y, nil); err == nil || !strings.Contains(err.Error(), "read config") {
			t.Errorf("load(%q) err = %v, want a read config error", y, err)
		}
	}
}
