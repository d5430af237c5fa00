package config

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/acpgw/gateway/agent"
)

// AgentSpec returns how to start the agent called name ("" =
// agents.default). An entry of agents.list wins; otherwise "demo" is the
// built-in demo agent: this program's own executable with the demo-agent
// subcommand and its state in DataDir/demo-agent. It reports false for any
// other name. It does no I/O beyond finding the executable's path.
func (c Config) AgentSpec(name string) (agent.Spec, bool) {
	if name == "" {
		name = c.Agents.Default
	}
	if name == "" {
		name = DemoAgent
	}
	if a, ok := c.Agents.List[name]; ok {
		env := make([]string, 0, len(a.Env))
		for _, k := range slices.Sorted(maps.Keys(a.Env)) {
			env = append(env, k+"="+a.Env[k])
		}
		return agent.Spec{
			Name:       name,
			Command:    slices.Clone(a.Command),
			Env:        env,
			Dir:        a.Cwd,
			AuthMethod: a.AuthMethod,
		}, true
	}
	if name != DemoAgent {
		return agent.Spec{}, false
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return agent.Spec{
		Name:    DemoAgent,
		Command: []string{exe, "demo-agent", "--state-dir", filepath.Join(c.DataDir, "demo-agent")},
	}, true
}

// Platforms returns the enabled platforms in the order discord, slack,
// web. Discord is enabled when its token is set, Slack when both its tokens
// are; the web chat when channels.web.enabled is true, or when it is unset
// and no other platform is enabled. It does no I/O.
func (c Config) Platforms() []string {
	var out []string
	if c.Channels.Discord.Token != "" {
		out = append(out, PlatformDiscord)
	}
	if c.Channels.Slack.AppToken != "" && c.Channels.Slack.BotToken != "" {
		out = append(out, PlatformSlack)
	}
	web := len(out) == 0
	if e := c.Channels.Web.Enabled; e != nil {
		web = *e
	}
	if web {
		out = append(out, PlatformWeb)
	}
	return out
}
