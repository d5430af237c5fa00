package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/sandbox"
)

// TestSandboxErrors: a bad sandbox or network setting is refused, naming
// its key and the allowed values.
func TestSandboxErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"mode", "agents:\n  sandbox: jail\n", `agents.sandbox: must be one of auto bwrap off, got "jail"`},
		{"network", "agents:\n  list:\n    a:\n      command: [x]\n      network: some\n", `agents.list.a.network: must be one of full none allow, got "some"`},
		{"allow empty", "agents:\n  list:\n    a:\n      command: [x]\n      network: allow\n", "agents.list.a.allow: network: allow needs at least one host:port"},
		{"allow with none", "agents:\n  list:\n    a:\n      command: [x]\n      network: none\n      allow: [\"a:1\"]\n", "agents.list.a.allow: network: none reaches nothing"},
		{"allow entry", "agents:\n  list:\n    a:\n      command: [x]\n      allow: [api.example.com]\n", `agents.list.a.allow[0]: must be host:port (a name or an IP, [::1]:443 for IPv6), got "api.example.com"`},
		{"allow port", "agents:\n  list:\n    a:\n      command: [x]\n      allow: [\"h:99999\"]\n", `agents.list.a.allow[0]: the port must be a number from 1 to 65535, got "h:99999"`},
		{"relative home", "agents:\n  list:\n    a:\n      command: [x]\n      sandbox:\n        home: home\n", `agents.list.a.sandbox.home: must be an absolute path, got "home"`},
		{"relative path", "agents:\n  list:\n    a:\n      command: [x]\n      sandbox:\n        readWrite: [/ok, cache]\n", `agents.list.a.sandbox.readWrite[1]: must be an absolute path, got "cache"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAgentSandbox: each agent's sandbox has its own home (the default
// under the data dir, or its setting), its network policy (full by
// default, none for the demo agent), the operator's paths, and hides the
// data dir, the configuration file, the event logs and the other agents'
// homes; agents.sandbox: off gives none.
func TestAgentSandbox(t *testing.T) {
	c := mustLoad(t, `
dataDir: /data
eventLog:
  dir: /logs
agents:
  list:
    a:
      command: [x]
      allow: ["127.0.0.1:8080"]
      sandbox:
        home: /homes/a
        readOnly: [/opt/tools]
        readWrite: [/var/cache/a]
    b:
      command: [y]
      network: none
`, nil)
	spec, _ := c.AgentSpec("a")
	s := spec.Sandbox
	if s == nil {
		t.Fatal("agent a has no sandbox")
	}
	if s.Home != "/homes/a" || s.Network.Mode != sandbox.NetFull || !slices.Equal(s.Network.Allow, []string{"127.0.0.1:8080"}) {
		t.Errorf("sandbox = %+v", s)
	}
	if !slices.Equal(s.ReadOnly, []string{"/opt/tools"}) || !slices.Equal(s.ReadWrite, []string{"/var/cache/a"}) {
		t.Errorf("paths = %v %v", s.ReadOnly, s.ReadWrite)
	}
	want := []string{"/data", c.File(), "/logs", "/data/agent-home/b", "/data/demo-agent"}
	if diff := cmp.Diff(want, s.Hide); diff != "" {
		t.Errorf("hidden (-want +got):\n%s", diff)
	}
	b, _ := c.AgentSpec("b")
	if b.Sandbox.Home != filepath.Join("/data", "agent-home", "b") || b.Sandbox.Network.Mode != sandbox.NetNone {
		t.Errorf("b's sandbox = %+v", b.Sandbox)
	}
	d, _ := c.AgentSpec("demo")
	if d.Sandbox.Home != "/data/demo-agent" || d.Sandbox.Network.Mode != sandbox.NetNone || !slices.Contains(d.Command, "/data/demo-agent") {
		t.Errorf("the demo agent's sandbox = %+v, command %v", d.Sandbox, d.Command)
	}
	off := mustLoad(t, "agents:\n  sandbox: off\n", nil)
	if d, _ := off.AgentSpec(""); d.Sandbox != nil {
		t.Errorf("agents.sandbox: off gave a sandbox: %+v", d.Sandbox)
	}
}

// TestSandboxHidesSecretFiles: the files secret settings are read from
// (file:/path) are hidden from every agent, wherever they lie (under /etc,
// which the sandbox shows read-only, say).
func TestSandboxHidesSecretFiles(t *testing.T) {
	creds := t.TempDir()
	web := writeSecret(t, creds, "web", "web-token\n")
	key := writeSecret(t, creds, "openai", "sk-openai\n")
	c := mustLoad(t, `
dataDir: /data
channels:
  web:
    token: file:`+web+`
agents:
  list:
    a:
      command: [x]
      env:
        OPENAI_API_KEY: file:`+key+`
`, nil)
	if got := c.SecretFiles(); !slices.Equal(got, []string{key, web}) {
		t.Errorf("SecretFiles = %v, want %v", got, []string{key, web})
	}
	for _, name := range []string{"a", "demo"} {
		spec, _ := c.AgentSpec(name)
		for _, f := range []string{web, key} {
			if !slices.Contains(spec.Sandbox.Hide, f) {
				t.Errorf("agent %s's sandbox shows the secret file %s (hidden: %v)", name, f, spec.Sandbox.Hide)
			}
		}
	}
}
