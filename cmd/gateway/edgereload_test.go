package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/natsnode"
)

// An edge's access rules follow its configuration file: a Discord mention
// from someone the first rules refuse is admitted once the file lets them
// in (someone refused is told why), and the file's other changes the edge does not read (a stream
// setting of the workers') are named nowhere.
func TestEdgeReloadsAccess(t *testing.T) {
	rules := func(users, metaMode string) string {
		return "access:\n  discord:\n    users: [" + users + "]\nacp:\n  stream:\n    metaMode: " + metaMode + "\n"
	}
	cfg, f := testConfig(t, rules("U1", "verbose"))
	pr, pw := io.Pipe()
	logs := newLineWatch()
	done := make(chan struct{})
	go func() { defer close(done); logs.read(pr) }()
	t.Cleanup(func() { pw.Close(); <-done })
	s := newEdgeSettings(cfg, slog.New(slog.NewJSONHandler(pw, nil)))
	stop := s.watch(t.Context(), f)
	t.Cleanup(stop)
	logs.wait(t, "the watch", func(l string) bool { return strings.Contains(l, "watching the configuration file for changes") })

	mention := func(user string) channels.Inbound {
		return channels.Inbound{
			Thread: channels.ThreadRef{Platform: "discord", Channel: "C1", Thread: "M1"},
			Author: channels.Author{ID: user}, Space: "G1", Text: "hello",
		}
	}
	if !s.admit(t.Context(), mention("U1")) || s.admit(t.Context(), mention("U2")) {
		t.Fatal("the first rules: want U1 admitted and U2 refused")
	}
	// The refused person is told why, privately (a Slack slash command's
	// Reply is an ephemeral message): no worker sees the event to say it.
	told := ""
	in := mention("U3")
	in.Reply = func(_ context.Context, text string) error { told = text; return nil }
	if s.admit(t.Context(), in) || !strings.Contains(told, "don't have access") {
		t.Errorf("a refused mention: told %q, want the refusal", told)
	}
	if err := os.WriteFile(f.config, []byte(rules("U1, U2", `"off"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "the reload", func(l string) bool { return strings.Contains(l, `"configuration reloaded"`) })
	if !s.admit(t.Context(), mention("U2")) {
		t.Error("U2 refused after the file lets them in")
	}
	if !s.admit(t.Context(), mention("U1")) {
		t.Error("U1 refused after the reload")
	}
	if r := logs.records("configuration changes that take effect at the next start of the edge"); len(r) != 0 {
		t.Errorf("restart keys logged for settings the edge does not read or applies: %v", r)
	}
}

// A gateway edge watches its configuration file: a change is applied (the
// web chat offers the new agents) and the changed settings it read at
// start (a listen address, cluster.leaseTTL) are named as taking effect at
// its next start, those of the workers (acp.stream) and what it applies
// (access, agents) not.
func TestEdgeReloads(t *testing.T) {
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	cfgFile := clusterConfig(t, n.ClientURL(), "edge")
	yaml, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	edge := startRole(t, "edge", cfgFile, "edge", "--id", "e1")
	line := edge.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
	base := line[strings.Index(line, "http"):]
	offered := func() string {
		t.Helper()
		return strings.Join(offeredAgents(t, func(path string) (*http.Response, error) { return http.Get(base + path) }), ", ")
	}
	if got := offered(); got != "demo" {
		t.Fatalf("agents offered before the reload: %q, want demo", got)
	}
	edge.stderr.wait(t, "the watch", func(l string) bool { return strings.Contains(l, "watching the configuration file for changes") })

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.NewReplacer("leaseTTL: 2s", "leaseTTL: 3s", "listen: 127.0.0.1:0", "listen: 127.0.0.1:1").Replace(string(yaml)) +
		"acp:\n  stream:\n    metaMode: \"off\"\n" +
		"access:\n  discord:\n    users: [\"123\"]\n" +
		fmt.Sprintf("agents:\n  default: second\n  list:\n    second:\n      command: [%q, demo-agent, --state-dir, %q]\n    third:\n      command: [%[1]q, demo-agent]\n", exe, filepath.Join(t.TempDir(), "second"))
	if err := os.WriteFile(cfgFile, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	edge.stderr.wait(t, "the reload", func(l string) bool { return strings.Contains(l, `"configuration reloaded"`) })
	restart := edge.stderr.records("configuration changes that take effect at the next start of the edge")
	want := "channels.web.listen, cluster.leaseTTL"
	if len(restart) != 1 || restart[0]["keys"] != want {
		t.Errorf("restart keys logged: %v, want %q once", restart, want)
	}
	if got := offered(); got != "second, third" {
		t.Errorf("agents offered after the reload: %q, want second, third", got)
	}
}

// The keys a reload names reach into the platforms' sections (a token, a
// listen address); an edge names those and the workers' settings not, a
// worker the reverse; a Discord edge names the guilds its commands were
// registered in, though it applies the rest of the access rules.
func TestRestartKeysOfRoles(t *testing.T) {
	a, _ := testConfig(t, "channels:\n  slack:\n    appToken: xapp-1\n    botToken: xoxb-1\ncluster:\n  leaseTTL: 2s\nbusy: queue\n")
	b, _ := testConfig(t, "channels:\n  catchUp: 1h\n  slack:\n    appToken: xapp-2\n    botToken: xoxb-1\ncluster:\n  leaseTTL: 3s\nbusy: interrupt\nagents:\n  maxProcesses: 3\n")
	b.DataDir, b.EventLog = a.DataDir, a.EventLog // each test config has its own
	d1, _ := testConfig(t, "channels:\n  discord:\n    token: x\naccess:\n  discord:\n    guilds: [\"1\"]\n")
	d2, _ := testConfig(t, "channels:\n  discord:\n    token: x\naccess:\n  discord:\n    guilds: [\"1\", \"2\"]\n    users: [\"3\"]\n")
	d2.DataDir, d2.EventLog = d1.DataDir, d1.EventLog
	for _, c := range []struct {
		role string
		got  []string
		want string
	}{
		{"edge", edgeRestartKeys(a, b, a.Platforms()), "channels.slack.appToken, cluster.leaseTTL"},
		{"discord edge", edgeRestartKeys(d1, d2, d1.Platforms()), "access.discord.guilds"},
		{"worker", workerRestartKeys(a, b), "agents.maxProcesses, channels.catchUp, cluster.leaseTTL"},
	} {
		if got := strings.Join(c.got, ", "); got != c.want {
			t.Errorf("%s: restart keys %q, want %q", c.role, got, c.want)
		}
	}
}
