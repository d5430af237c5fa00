package config

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/sandbox"
	"github.com/acpgw/gateway/workspace"
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
			Name:        name,
			Command:     slices.Clone(a.Command),
			Env:         env,
			InheritEnv:  slices.Clone(a.InheritEnv),
			Secrets:     c.secretsFor(name),
			SecretNames: c.SecretEnvNames(),
			Dir:         a.Cwd,
			AuthMethod:  a.AuthMethod,
			NoMCP:       a.MCP != nil && !*a.MCP,
			Sandbox:     c.sandboxFor(name),
		}, true
	}
	if name != DemoAgent {
		return agent.Spec{}, false
	}
	return agent.Spec{
		Name:        DemoAgent,
		Command:     []string{executable(), "demo-agent", "--state-dir", c.AgentHome(DemoAgent)},
		Secrets:     c.secretsFor(name),
		SecretNames: c.SecretEnvNames(),
		Sandbox:     c.sandboxFor(name),
	}, true
}

// executable is the gateway's own program.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

// AgentHome is the home directory the agent called name has in its
// sandbox: agents.list.NAME.sandbox.home, else dataDir/agent-home/NAME;
// the built-in demo agent's is its state directory, dataDir/demo-agent. It
// does no I/O.
func (c Config) AgentHome(name string) string {
	if a, ok := c.Agents.List[name]; ok {
		if a.Sandbox.Home != "" {
			return a.Sandbox.Home
		}
		return filepath.Join(c.DataDir, "agent-home", name)
	}
	if name == DemoAgent {
		return filepath.Join(c.DataDir, "demo-agent")
	}
	return ""
}

// AgentNetwork is the network policy of the agent called name: its
// agents.list entry's network (default full) and allow; none for the
// built-in demo agent, which needs no network. It does no I/O.
func (c Config) AgentNetwork(name string) sandbox.Network {
	a, ok := c.Agents.List[name]
	if !ok {
		return sandbox.Network{Mode: sandbox.NetNone}
	}
	return sandbox.Network{Mode: cmp.Or(a.Network, sandbox.NetFull), Allow: slices.Clone(a.Allow)}
}

// sandboxFor is the sandbox of the agent called name, nil with
// agents.sandbox: off. It hides the gateway's data directory, its
// configuration file, its event logs, the files its secrets were read
// from and the other agents' homes. The
// session adds the thread's workspace and MCP socket; the gateway's own
// listeners are added to Network.Deny by whoever knows them.
func (c Config) sandboxFor(name string) *sandbox.Spec {
	if c.Agents.Sandbox == sandbox.Off {
		return nil
	}
	s := &sandbox.Spec{
		Home:    c.AgentHome(name),
		Exe:     executable(),
		Network: c.AgentNetwork(name),
	}
	if a, ok := c.Agents.List[name]; ok {
		s.ReadOnly, s.ReadWrite = slices.Clone(a.Sandbox.ReadOnly), slices.Clone(a.Sandbox.ReadWrite)
	}
	for _, h := range append([]string{c.DataDir, c.File(), c.EventLog.Dir}, c.SecretFiles()...) {
		if h != "" {
			if abs, err := filepath.Abs(h); err == nil {
				s.Hide = append(s.Hide, abs)
			}
		}
	}
	for _, other := range slices.Sorted(maps.Keys(c.Agents.List)) {
		if h := c.AgentHome(other); other != name && h != s.Home {
			s.Hide = append(s.Hide, h)
		}
	}
	if h := c.AgentHome(DemoAgent); name != DemoAgent && h != s.Home {
		s.Hide = append(s.Hide, h)
	}
	return s
}

// AgentWorkspace returns the workspace settings of the agent called name
// ("" = agents.default): its agents.list entry's workspace, workspaceDir
// and cwd. The built-in demo agent works in a directory of each thread's
// own under dataDir (its files never land in the gateway's directory);
// an agent not listed in the shared cwd. It does no I/O.
func (c Config) AgentWorkspace(name string) workspace.Agent {
	if name == "" {
		name = c.Agents.Default
	}
	a, ok := c.Agents.List[name]
	if !ok && name == DemoAgent {
		return workspace.Agent{Mode: workspace.Dir}
	}
	if !ok {
		return workspace.Agent{Mode: workspace.Shared}
	}
	return workspace.Agent{
		Mode:     cmp.Or(workspace.Mode(a.Workspace), workspace.Shared),
		Cwd:      a.Cwd,
		Template: a.WorkspaceDir,
	}
}

// CheckDirs checks that the working directory (cwd) of every agent of
// agents.list exists and is a directory, as Validate cannot (it does no
// I/O; this stats them). It returns every problem joined, each naming its
// key ("agents.list.claude.cwd: the directory /src does not exist"), or
// nil. A relative cwd is taken from the gateway's working directory.
//
// For an agent with workspace: worktree, it also checks (running git) that
// its cwd is in a git repository with a commit.
func (c Config) CheckDirs() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Agents.List)) {
		a := c.Agents.List[name]
		dir := a.Cwd
		path := "agents.list." + name + ".cwd"
		if dir == "" {
			dir = "."
		} else {
			fi, err := os.Stat(dir)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				errs = append(errs, errorf(path, "the directory %s does not exist", dir))
				continue
			case err != nil:
				errs = append(errs, errorf(path, "cannot use the directory %s: %v", dir, err))
				continue
			case !fi.IsDir():
				errs = append(errs, errorf(path, "%s is not a directory", dir))
				continue
			}
		}
		if workspace.Mode(a.Workspace) == workspace.Worktree {
			if err := workspace.CheckRepo(context.Background(), dir); err != nil {
				errs = append(errs, errorf(path, "%s", strings.TrimPrefix(err.Error(), "workspace: ")))
			}
		}
	}
	return errors.Join(errs...)
}

// SecretEnvNames returns the environment variables no agent inherits,
// even when its inheritEnv lists them: the platform tokens' usual names
// (channels.SectionInfo.SecretEnv) and the gateway's own GATEWAY_
// settings (which may hold any setting, tokens too).
func (c Config) SecretEnvNames() []string {
	var out []string
	for _, s := range c.Channels.sections {
		out = append(out, s.s.Info().SecretEnv...)
	}
	return append(out, EnvPrefix+"*")
}

// minAgentSecret is the shortest env value of another agent counted as a
// secret: shorter ones are flags ("1", "true"), not credentials.
const minAgentSecret = 8

// SecretLooking are the names (path.Match patterns, matched in upper
// case) of env entries whose values are credentials by their name: such
// a value of one agent is never given to another.
var SecretLooking = []string{"*_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD*"}

// secretEnv reports whether the env entry k of a is a secret: its name
// looks like one (SecretLooking) or a.SecretEnv lists it.
func (a AgentSpec) secretEnv(k string) bool {
	for _, p := range slices.Concat(SecretLooking, a.SecretEnv) {
		name := k
		if slices.Contains(SecretLooking, p) {
			name = strings.ToUpper(k)
		}
		if p == name {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// secretsFor returns the values the agent called name must never see:
// every secret setting of the gateway (the platforms' tokens, the chat
// users' tokens: every field tagged secret outside agents.list), and the other
// agents' env values that are secrets (AgentSpec.secretEnv) other than
// values this agent is given itself, such as a shared key. Another
// agent's other values (a base URL, a CA path) are not secrets: two agents
// behind one proxy share them.
func (c Config) secretsFor(name string) []string {
	var out []string
	all := c.Agents.List
	c.Agents.List = nil // their env is handled below
	secretValues(reflect.ValueOf(c), false, &out)
	own := slices.Collect(maps.Values(all[name].Env))
	for _, other := range slices.Sorted(maps.Keys(all)) {
		if other == name {
			continue
		}
		a := all[other]
		for k, v := range a.Env {
			if a.secretEnv(k) && len(v) >= minAgentSecret && !slices.Contains(own, v) {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Platforms returns the enabled platforms: those that need setup and
// have it, in their order, then those that need none (a local chat, see
// channels.SectionInfo.Fallback), which are on when their section says so
// or, unset, when no other platform is. It does no I/O.
func (c Config) Platforms() []string {
	var out []string
	for _, s := range c.Channels.sections {
		if !s.s.Info().Fallback && s.s.On(false) {
			out = append(out, s.name)
		}
	}
	othersOn := len(out) > 0
	for _, s := range c.Channels.sections {
		if s.s.Info().Fallback && s.s.On(othersOn) {
			out = append(out, s.name)
		}
	}
	return out
}

// secretValues appends the non-empty strings of v held in fields tagged
// secret (or under one: secret is true inside it) to out.
func secretValues(v reflect.Value, secret bool, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			secretValues(v.Elem(), secret, out)
		}
	case reflect.Struct:
		if v.Type() == durationType {
			return
		}
		if view, ok := asView(v); ok {
			v = view
		}
		for _, f := range fieldsOf(v.Type()) {
			secretValues(v.FieldByIndex(f.index), secret || f.secret, out)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			secretValues(it.Value(), secret, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			secretValues(v.Index(i), secret, out)
		}
	case reflect.String:
		if secret && v.String() != "" {
			*out = append(*out, v.String())
		}
	}
}

// fillDefaults sets the defaults of the agents.list entries' settings that
// are unset: mcp is true, workspace is shared (so that gateway check
// shows what applies).
func (a *Agents) fillDefaults() {
	for name, spec := range a.List {
		if spec.MCP == nil {
			spec.MCP = new(true)
		}
		if spec.Workspace == "" {
			spec.Workspace = "shared"
		}
		if spec.Network == "" {
			spec.Network = "full"
		}
		a.List[name] = spec
	}
}
