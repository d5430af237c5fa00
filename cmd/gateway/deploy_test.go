package main

import (
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"go.yaml.in/yaml/v3"
)

// The deployment files (Dockerfile, deploy/) are read from the repository's
// root.
const repoRoot = "../.."

// compose is the part of deploy/compose.yaml the tests read.
type compose struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	SecurityOpt []string          `yaml:"security_opt"`
}

func readCompose(t *testing.T) compose {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	return c
}

// gatewayServices are the compose services that run the gateway's image
// (the ones built from the repository), by name.
func (c compose) gatewayServices() map[string]composeService {
	out := map[string]composeService{}
	for name, s := range c.Services {
		if s.Build != nil {
			out[name] = s
		}
	}
	return out
}

// mount is one entry of a service's volumes: a named volume or a file or
// directory of the host (relative to deploy/), and where it appears.
type mount struct{ source, target string }

func (s composeService) mounts() []mount {
	var out []mount
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 {
			out = append(out, mount{parts[0], parts[1]})
		}
	}
	return out
}

// hostPath is the file of the host that the container sees at path, through
// a bind mount of the service.
func (s composeService) hostPath(path string) (string, bool) {
	for _, m := range s.mounts() {
		if strings.HasPrefix(m.source, "./") && m.target == path {
			return filepath.Join(repoRoot, "deploy", m.source), true
		}
	}
	return "", false
}

// flagValue is the value of --name in args.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--"+name || a == "-"+name {
			if i+1 < len(args) {
				return args[i+1], true
			}
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// composeVar is compose's ${NAME}, ${NAME:-default} and ${NAME:?message}.
var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}`)

// interpolate does what docker compose does to a value of the file, with
// env as the shell's environment (and deploy/.env); it fails where compose
// would refuse to start.
func interpolate(value string, env map[string]string) (string, error) {
	var err error
	out := composeVar.ReplaceAllStringFunc(value, func(ref string) string {
		m := composeVar.FindStringSubmatch(ref)
		v := env[m[1]]
		switch {
		case v != "":
			return v
		case m[2] == "-":
			return m[3]
		case m[2] == "?":
			err = errors.Join(err, errors.New(m[1]+": "+m[3]))
		}
		return ""
	})
	return out, err
}

// configRef is a ${NAME} reference in a gateway configuration file.
var configRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Every gateway service of deploy/compose.yaml runs a command (a subcommand
// and flags) that this binary accepts, and `gateway check` accepts its
// configuration file with the environment the service gets: the image's
// ENV, then its environment: section as compose fills it in, once with
// only the variables compose requires set and once with every one set.
func TestComposeCommandsAndConfigs(t *testing.T) {
	c := readCompose(t)
	image := readDockerfile(t, "Dockerfile")
	services := c.gatewayServices()
	roles := map[string][]string{}
	// The platforms each service's configuration names, by shell: the
	// edge serves some; a worker serves those the edges announce and
	// names none (it holds no platform token).
	named := map[string]map[string][]string{}
	// The volumes gateway nats writes each role's credentials into.
	exports := map[string]string{}
	if n, ok := services["nats"]; ok {
		if slices.Contains(n.Command, "--no-auth") || len(n.Command) == 0 || n.Command[0] != "nats" {
			t.Errorf("nats: command %q: want gateway nats with its credentials (no --no-auth)", n.Command)
		}
		for _, role := range []string{"edge", "worker"} {
			dir, ok := flagValue(n.Command, "export-"+role)
			for _, m := range n.mounts() {
				if ok && m.target == dir && hasKey(c.Volumes, m.source) {
					exports[role] = m.source
				}
			}
			if exports[role] == "" {
				t.Errorf("nats: --export-%s is not on a named volume: %q", role, n.Command)
			}
		}
	} else {
		t.Error("no nats service running gateway nats")
	}
	for _, name := range slices.Sorted(maps.Keys(services)) {
		s := services[name]
		if len(s.Command) == 0 {
			t.Errorf("service %s: no command (the image's default is gateway run; say the role)", name)
			continue
		}
		// A role that runs agents makes their sandboxes' namespaces
		// inside the container, which Docker's defaults forbid.
		if s.Command[0] == "worker" || s.Command[0] == "run" {
			for _, opt := range []string{"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"} {
				if !slices.Contains(s.SecurityOpt, opt) {
					t.Errorf("service %s runs agents without security_opt %s: their sandbox cannot start", name, opt)
				}
			}
		}
		if s.Command[0] == "nats" {
			args := append(slices.Clone(s.Command), "--help")
			if _, stderr, err := runCLI(t, "", args...); err != nil && !errors.Is(err, flag.ErrHelp) {
				t.Errorf("gateway %s: %v\n%s", strings.Join(args, " "), err, stderr)
			}
			continue
		}
		roles[s.Command[0]] = append(roles[s.Command[0]], name)
		t.Run(name, func(t *testing.T) {
			// The subcommand and every flag given are the binary's:
			// parsing stops at --help, after the others.
			args := append(slices.Clone(s.Command), "--help")
			if _, stderr, err := runCLI(t, "", args...); err != nil && !errors.Is(err, flag.ErrHelp) {
				t.Errorf("gateway %s: %v\n%s", strings.Join(args, " "), err, stderr)
			}
			inContainer, ok := flagValue(s.Command, "config")
			if !ok {
				t.Fatalf("command %q gives no --config", s.Command)
			}
			file, ok := s.hostPath(inContainer)
			if !ok {
				t.Fatalf("--config %s is not a file of deploy/ mounted into the service", inContainer)
			}
			cfg, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// A reference compose does not pass would be taken from
			// whatever environment docker has: none may be missing.
			for _, m := range configRef.FindAllStringSubmatch(string(cfg), -1) {
				if _, ok := s.Environment[m[1]]; !ok {
					if _, ok := image.env[m[1]]; !ok && !commentedOut(string(cfg), m[0]) {
						t.Errorf("%s refers to ${%s}, which the service's environment does not pass", file, m[1])
					}
				}
			}
			for _, shell := range []struct {
				name string
				env  map[string]string
			}{
				{"required only", requiredVars(s.Environment)},
				{"all set", allVars(s.Environment)},
			} {
				for k, v := range image.env {
					t.Setenv(k, v)
				}
				for k, raw := range s.Environment {
					v, err := interpolate(raw, shell.env)
					if err != nil {
						t.Fatalf("%s: compose would not start: %v", shell.name, err)
					}
					t.Setenv(k, v)
				}
				out, stderr, err := runCLI(t, "", "check", "--config", file)
				if err != nil {
					t.Errorf("%s: gateway check --config %s: %v\n%s", shell.name, file, err, stderr)
					continue
				}
				if !strings.Contains(out, "cluster:\n  name: gateway\n  nats:\n    url: tls://nats:4222\n") {
					t.Errorf("%s: %s does not point cluster.nats.url at the nats service over TLS:\n%s", shell.name, file, out)
				}
				loaded, err := config.LoadOptions{Path: file, Platforms: platforms()}.Load()
				if err != nil {
					t.Fatal(err)
				}
				// The role's credentials, from the volume gateway nats
				// writes its role's files into, and no other's.
				role := s.Command[0]
				files := map[string]string{"cluster.nats.nkey": loaded.Cluster.NATS.NKey, "cluster.nats.tls.ca": loaded.Cluster.NATS.TLS.CA}
				if role == "edge" {
					files["cluster.signingKey"] = loaded.Cluster.SigningKey
				} else {
					files["cluster.edgeKeys"] = loaded.Cluster.EdgeKeys
				}
				for key, f := range files {
					if !slices.ContainsFunc(s.mounts(), func(m mount) bool {
						return m.source == exports[role] && f != "" && strings.HasPrefix(f, m.target+"/")
					}) {
						t.Errorf("%s: %s %q is not a file of the volume %q gateway nats writes a %s's credentials into", file, key, f, exports[role], role)
					}
				}
				for other, v := range exports {
					if other != role && slices.ContainsFunc(s.mounts(), func(m mount) bool { return m.source == v }) {
						t.Errorf("service %s mounts %s, the %s's credentials", name, v, other)
					}
				}
				if named[shell.name] == nil {
					named[shell.name] = map[string][]string{}
				}
				named[shell.name][name] = loaded.Platforms()
				// An agent that is the image's own binary (the demo
				// agent with its state elsewhere) is started with a
				// subcommand and flags the binary takes.
				for _, agent := range slices.Sorted(maps.Keys(loaded.Agents.List)) {
					cmd := loaded.Agents.List[agent].Command
					if len(cmd) == 0 || cmd[0] != image.entrypoint[0] {
						continue
					}
					args := append(slices.Clone(cmd[1:]), "--help")
					if _, stderr, err := runCLI(t, "", args...); err != nil && !errors.Is(err, flag.ErrHelp) {
						t.Errorf("agents.list.%s: gateway %s: %v\n%s", agent, strings.Join(args, " "), err, stderr)
					}
				}
			}
		})
	}
	if len(roles["edge"]) != 1 || len(roles["worker"]) != 2 {
		t.Fatalf("roles = %v, want one edge and two workers", roles)
	}
	for _, shell := range slices.Sorted(maps.Keys(named)) {
		edge := named[shell][roles["edge"][0]]
		if len(edge) == 0 {
			t.Errorf("%s: the edge serves no platform", shell)
		}
		for _, w := range roles["worker"] {
			// The web chat is on by default where nothing else is; a
			// worker does not listen for it either way.
			if got := slices.DeleteFunc(named[shell][w], func(p string) bool { return p == web.Platform }); len(got) != 0 {
				t.Errorf("%s: %s names the platforms %q: a worker serves what the edges announce and needs no token", shell, w, got)
			}
		}
	}
	// The variables of the edge's configuration are the platforms'
	// tokens: no worker is given one.
	edgeCfg, ok := services[roles["edge"][0]].hostPath("/etc/acp-gateway/edge.yaml")
	if !ok {
		t.Fatal("the edge does not mount deploy/edge.yaml")
	}
	b, err := os.ReadFile(edgeCfg)
	if err != nil {
		t.Fatal(err)
	}
	tokens := configRef.FindAllStringSubmatch(string(b), -1)
	if len(tokens) == 0 {
		t.Fatal("deploy/edge.yaml takes no token from the environment")
	}
	for _, w := range roles["worker"] {
		for _, m := range tokens {
			if _, ok := services[w].Environment[m[1]]; ok {
				t.Errorf("service %s is given %s, a platform's token: only the edges need it", w, m[1])
			}
		}
	}
}

// commentedOut reports whether every line holding ref is a YAML comment.
func commentedOut(file, ref string) bool {
	for l := range strings.SplitSeq(file, "\n") {
		if strings.Contains(l, ref) && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			return false
		}
	}
	return true
}

// requiredVars sets the variables compose refuses to start without, and
// nothing else.
func requiredVars(environment map[string]string) map[string]string {
	env := map[string]string{}
	for _, raw := range environment {
		for _, m := range composeVar.FindAllStringSubmatch(raw, -1) {
			if m[2] == "?" {
				env[m[1]] = "test-" + strings.ToLower(m[1])
			}
		}
	}
	return env
}

// allVars sets every variable the service's environment names, each in its
// platform's shape.
func allVars(environment map[string]string) map[string]string {
	env := map[string]string{}
	for _, raw := range environment {
		for _, m := range composeVar.FindAllStringSubmatch(raw, -1) {
			v := "test-" + strings.ToLower(m[1])
			switch m[1] {
			case "SLACK_APP_TOKEN":
				v = "xapp-1-test"
			case "SLACK_BOT_TOKEN":
				v = "xoxb-test"
			}
			env[m[1]] = v
		}
	}
	return env
}

// The compose file has the NATS with JetStream and its store on a volume,
// each gateway process its own data volume at the image's data directory
// (one process per data directory), and the workers a volume in common for
// the agents' state and the workspaces, which worker.yaml uses.
func TestComposeVolumes(t *testing.T) {
	c := readCompose(t)
	image := readDockerfile(t, "Dockerfile")
	nats, ok := c.Services["nats"]
	if !ok {
		t.Fatal("no nats service")
	}
	store, ok := flagValue(nats.Command, "store")
	if len(nats.Command) == 0 || nats.Command[0] != "nats" || !ok {
		t.Fatalf("nats command %q: want gateway nats --store DIR", nats.Command)
	}
	if !slices.ContainsFunc(nats.mounts(), func(m mount) bool { return m.target == store && hasKey(c.Volumes, m.source) }) {
		t.Errorf("nats: its store %s is not on a named volume: %q", store, nats.Volumes)
	}

	dataDir := image.env["GATEWAY_DATADIR"]
	if dataDir == "" || !slices.Contains(image.volumes, dataDir) {
		t.Fatalf("the image's data directory %q is not one of its volumes %q", dataDir, image.volumes)
	}
	dataOwner := map[string]string{}
	var shared []string // named volumes of the first worker besides its data
	first := true
	services := c.gatewayServices()
	for _, name := range slices.Sorted(maps.Keys(services)) {
		s := services[name]
		var data string
		var others []string
		for _, m := range s.mounts() {
			switch {
			case strings.HasPrefix(m.source, "."):
			case m.target == dataDir:
				data = m.source
			default:
				others = append(others, m.source)
			}
		}
		if data == "" || !hasKey(c.Volumes, data) {
			t.Errorf("%s: no named volume at %s: %q", name, dataDir, s.Volumes)
			continue
		}
		if o, ok := dataOwner[data]; ok {
			t.Errorf("%s and %s share the data volume %s", o, name, data)
		}
		dataOwner[data] = name
		if len(s.Command) == 0 || s.Command[0] != "worker" {
			continue
		}
		if first {
			shared, first = others, false
		} else {
			shared = slices.DeleteFunc(shared, func(v string) bool { return !slices.Contains(others, v) })
		}
	}
	if len(shared) == 0 {
		t.Fatal("the workers share no volume for the agents' state and workspaces")
	}
	w := c.Services["worker-1"]
	var sharedAt string
	for _, m := range w.mounts() {
		if m.source == shared[0] {
			sharedAt = m.target
		}
	}
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "worker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(cfg), sharedAt+"/"); n < 2 {
		t.Errorf("worker.yaml puts no agent state and workspaces under the shared %s (%d uses)", sharedAt, n)
	}
	// The demo agent entry starts the image's own binary.
	if !strings.Contains(string(cfg), "command: ["+image.entrypoint[0]+", demo-agent") {
		t.Errorf("worker.yaml's demo agent does not start the image's %s", image.entrypoint[0])
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// dockerfile is what the tests read of a Dockerfile: its stages' base
// images, and the final stage's settings.
type dockerfile struct {
	from       []string // each stage's base image
	build      string   // the RUN lines of the stages before the last
	final      []string // the instructions of the last stage
	user       string
	entrypoint []string
	cmd        []string
	volumes    []string
	env        map[string]string
}

func readDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	d := dockerfile{env: map[string]string{}}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		op = strings.ToUpper(op)
		rest = strings.TrimSpace(rest)
		exec := func() []string {
			var v []string
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				t.Errorf("%s: %s %s: not the exec form (a JSON list): %v", path, op, rest, err)
			}
			return v
		}
		switch op {
		case "FROM":
			d.from = append(d.from, strings.Fields(rest)[0])
			d.build += strings.Join(d.final, "\n")
			d.final = nil
			d.user, d.entrypoint, d.cmd, d.volumes = "", nil, nil, nil
			clear(d.env)
			continue
		case "USER":
			d.user = rest
		case "ENTRYPOINT":
			d.entrypoint = exec()
		case "CMD":
			d.cmd = exec()
		case "VOLUME":
			d.volumes = append(d.volumes, exec()...)
		case "ENV":
			k, v, _ := strings.Cut(rest, "=")
			d.env[k] = v
		}
		d.final = append(d.final, op+" "+rest)
	}
	return d
}

// rootUser reports whether a Dockerfile USER runs as root: unset, root, or
// uid 0.
func rootUser(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	return u == "" || u == "root" || u == "0"
}

// The image is built in a stage of its own into a static binary (no cgo)
// and runs in a final stage that installs bubblewrap (the agents'
// sandbox: without it gateway run refuses to start) and git (worktree
// workspaces), as a user other than root, with the gateway as its entry
// point, run as its default command and the data directory a volume.
func TestDockerfile(t *testing.T) {
	d := readDockerfile(t, "Dockerfile")
	if len(d.from) < 2 {
		t.Fatalf("stages %q: want a build stage and a final one", d.from)
	}
	if !strings.Contains(d.build, "CGO_ENABLED=0") || !strings.Contains(d.build, "go build") || !strings.Contains(d.build, "./cmd/gateway") {
		t.Errorf("the build stage does not build ./cmd/gateway with CGO_ENABLED=0:\n%s", d.build)
	}
	installs(t, "Dockerfile", d, "bubblewrap", "git")
	if rootUser(d.user) {
		t.Errorf("USER %q: want a user other than root", d.user)
	}
	if len(d.entrypoint) != 1 || filepath.Base(d.entrypoint[0]) != "gateway" {
		t.Errorf("ENTRYPOINT %q: want the gateway binary alone", d.entrypoint)
	}
	if !slices.Equal(d.cmd, []string{"run"}) {
		t.Errorf("CMD %q: want [\"run\"]", d.cmd)
	}
	if len(d.volumes) == 0 || !slices.Contains(d.volumes, d.env["GATEWAY_DATADIR"]) {
		t.Errorf("VOLUME %q does not hold the data directory (GATEWAY_DATADIR=%q)", d.volumes, d.env["GATEWAY_DATADIR"])
	}
}

// installs fails the test unless the final stage of the Dockerfile d
// (read from name) installs each package with apt-get.
func installs(t *testing.T, name string, d dockerfile, pkgs ...string) {
	t.Helper()
	final := strings.Join(d.final, "\n")
	for _, p := range pkgs {
		if !regexp.MustCompile(`(?s)RUN .*apt-get install[^&]* ` + regexp.QuoteMeta(p) + `\b`).MatchString(final) {
			t.Errorf("the final stage of %s does not install %s:\n%s", name, p, final)
		}
	}
}

// The Node.js image for npm agents keeps the gateway's entry point, data
// directory and default command, installs the sandbox and git, and runs
// as a user other than root.
func TestDockerfileNode(t *testing.T) {
	base := readDockerfile(t, "Dockerfile")
	d := readDockerfile(t, "deploy/Dockerfile.node")
	installs(t, "deploy/Dockerfile.node", d, "bubblewrap", "git")
	if rootUser(d.user) {
		t.Errorf("USER %q: want a user other than root", d.user)
	}
	if !slices.Equal(d.entrypoint, base.entrypoint) || !slices.Equal(d.cmd, base.cmd) {
		t.Errorf("ENTRYPOINT %q CMD %q, want the gateway image's %q %q", d.entrypoint, d.cmd, base.entrypoint, base.cmd)
	}
	if d.env["GATEWAY_DATADIR"] != base.env["GATEWAY_DATADIR"] || !slices.Contains(d.volumes, base.env["GATEWAY_DATADIR"]) {
		t.Errorf("data directory %q, volumes %q: want the gateway image's %q as a volume", d.env["GATEWAY_DATADIR"], d.volumes, base.env["GATEWAY_DATADIR"])
	}
	if !strings.Contains(strings.Join(d.final, "\n"), "COPY --from=gateway "+base.entrypoint[0]+" "+base.entrypoint[0]) {
		t.Errorf("the gateway binary is not copied from the gateway image:\n%s", strings.Join(d.final, "\n"))
	}
}
