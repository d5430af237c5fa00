package main

import (
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/config"
)

// scrubEnv removes the gateway's secrets from its own environment, so
// that no program it starts (agents, git, the MCP server) can inherit
// them by any path: the variables c's secret settings were expanded from
// (config.Config.SecretVars), the platforms' usual token variables and
// the GATEWAY_ settings (config.Config.SecretEnvNames). The variables of
// agent.BaseEnv stay (an agent's env may extend ${PATH}), and so do
// GATEWAY_TEST_ (tests' own). The configuration keeps loading from the
// environment as it was at start (runFlags.environ), so a reload still
// resolves ${DISCORD_TOKEN}. It returns the names removed, sorted.
func scrubEnv(c config.Config) []string {
	vars := c.SecretVars()
	names := c.SecretEnvNames()
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" || matchName(agent.BaseEnv, k) || strings.HasPrefix(k, config.EnvPrefix+"TEST_") {
			continue
		}
		if slices.Contains(vars, k) || matchName(names, k) {
			os.Unsetenv(k)
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// logScrubbed says which variables scrubEnv removed (names only).
func logScrubbed(log *slog.Logger, names []string) {
	if len(names) > 0 {
		log.Info("secrets removed from the gateway's environment; programs it starts do not inherit them", "variables", strings.Join(names, ","))
	}
}

// matchName reports whether name matches one of patterns (a "*" matches
// any run of characters), as agent environments are matched.
func matchName(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok || p == name {
			return true
		}
	}
	return false
}
