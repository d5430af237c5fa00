// Package claudetest runs the real claude-agent-acp in tests, against the
// fake Messages API of package fakeanthropic: where the pinned npm
// packages are, whether the tests are enabled, and the agent.Spec that
// keeps the agent off the network and out of the tester's own Claude
// settings.
//
// The tests are opt-in: they need node and the npm packages pinned under
// agent/testdata (see agent/testdata/claude/README.md). Set
// GATEWAY_TEST_CLAUDE_AGENT=1 to run them (.ci/run does when npm can
// install the packages); with it set and a package missing, they fail and
// print the npm command.
package claudetest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/agent"
)

// EnableVar turns the Claude interop tests on when set to 1.
const EnableVar = "GATEWAY_TEST_CLAUDE_AGENT"

// Release is one pinned claude-agent-acp: the npm project that pins it
// (relative to the repository root) and the package's name.
type Release struct {
	Dir, Package string
}

var (
	// Agent is the release the basic interop test runs (text, tools,
	// permissions).
	Agent = Release{Dir: "agent/testdata/claude", Package: "@zed-industries/claude-agent-acp"}
	// Asker is the release that turns Claude's AskUserQuestion into an
	// elicitation (form question).
	Asker = Release{Dir: "agent/testdata/claude-ask", Package: "@agentclientprotocol/claude-agent-acp"}
)

// Install is the command, run from the repository root, that installs r.
func (r Release) Install() string { return "npm ci --prefix " + r.Dir }

// SkipUnlessEnabled skips the test unless the Claude interop tests are on.
func SkipUnlessEnabled(t testing.TB) {
	t.Helper()
	if os.Getenv(EnableVar) != "1" {
		t.Skipf("interop test with the real claude-agent-acp is opt-in: from the repository root run `%s` and `%s`, then set %s=1 (see agent/testdata/claude/README.md)", Agent.Install(), Asker.Install(), EnableVar)
	}
}

// Command returns the command that runs release r, skipping the test
// unless the tests are enabled and failing it when r is not installed.
func Command(t testing.TB, r Release) []string {
	t.Helper()
	SkipUnlessEnabled(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s=1 but node is not on PATH: %v", EnableVar, err)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	entry := filepath.Join(root, filepath.FromSlash(r.Dir), "node_modules", filepath.FromSlash(r.Package), "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s=1 but %s is not installed (%v); from the repository root run: %s", EnableVar, r.Package, err, r.Install())
	}
	return []string{node, entry}
}

// Spec returns the spec that runs release r in dir against the fake
// Messages API at apiURL, with a temporary HOME (so the tester's own
// Claude settings and sessions are neither read nor written) and no
// traffic but to the fake.
func Spec(t testing.TB, r Release, apiURL, dir string) agent.Spec {
	t.Helper()
	command := Command(t, r)
	home := t.TempDir()
	return agent.Spec{
		Name:    "claude",
		Command: command,
		Dir:     dir,
		Env: []string{
			// Claude Code refuses some modes when run as root otherwise.
			"IS_SANDBOX=1",
			"ANTHROPIC_API_KEY=dummy",
			"ANTHROPIC_BASE_URL=" + apiURL,
			// No telemetry or update checks.
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"HOME=" + home,
			"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		},
	}
}

// RepoRoot is the nearest directory above the working directory (a
// package's directory, under go test) that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
