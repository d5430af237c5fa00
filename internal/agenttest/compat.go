package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/internal/claudetest"
)

// CompatVar names a directory: when set, every feature a passing test
// proved of a real agent (Proved) is appended there, one JSON line per
// feature, to a file of the test's package; the compat program renders
// the README's compatibility table from those files and checks it.
const CompatVar = "GATEWAY_TEST_COMPAT_OUT"

// Feature is one column of the README's compatibility table.
type Feature string

// The features, in the table's order.
const (
	Text        Feature = "text"
	Tools       Feature = "tools"
	Permissions Feature = "permissions"
	Stop        Feature = "stop"
	Models      Feature = "models"
	Modes       Feature = "modes"
	Resume      Feature = "resume"
	Questions   Feature = "questions"
	Usage       Feature = "usage"
	Subagents   Feature = "subagents"
)

// Features are all the features, in the table's order.
var Features = []Feature{Text, Tools, Permissions, Stop, Models, Modes, Resume, Questions, Usage, Subagents}

// Pin is a pinned npm package that a test ran as an agent: the npm
// project that pins it (relative to the repository root) and the
// package's name. Demo marks the gateway's own demo agent instead.
type Pin struct {
	Dir, Package string
	Demo         bool
}

// Pin is the package that pins a.
func (a Agent) Pin() Pin { return Pin{Dir: a.Dir, Package: a.Package} }

// ClaudePin is the package that pins release r of claude-agent-acp.
func ClaudePin(r claudetest.Release) Pin { return Pin{Dir: r.Dir, Package: r.Package} }

// DemoPin is the gateway's demo agent (gateway demo-agent).
var DemoPin = Pin{Demo: true, Package: "gateway demo-agent"}

// Record is one line of a compat file: a feature a test proved of a
// package at a version.
type Record struct {
	Package string  `json:"package"`
	Version string  `json:"version"`
	Feature Feature `json:"feature"`
	Test    string  `json:"test"`
}

// DemoVersion is the version the demo agent's row shows: it is built
// with the gateway.
const DemoVersion = "built in"

var compatMu sync.Mutex // serializes appends of one test binary

// Proved records, if t passes and CompatVar is set, that the test showed
// each feature of the agent p pins. Call it where the test has asserted
// the feature; a failure later in the test records nothing.
func Proved(t testing.TB, p Pin, features ...Feature) {
	t.Helper()
	dir := os.Getenv(CompatVar)
	if dir == "" {
		return
	}
	version := DemoVersion
	if !p.Demo {
		v, err := PinnedVersion(p)
		if err != nil {
			t.Errorf("compat: %v", err)
			return
		}
		version = v
	}
	name := t.Name()
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			return
		}
		if err := appendRecords(dir, p, version, name, features); err != nil {
			t.Errorf("compat: %v", err)
		}
	})
}

func appendRecords(dir string, p Pin, version, test string, features []Feature) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := claudetest.RepoRoot()
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil {
		return err
	}
	file := filepath.Join(dir, strings.ReplaceAll(filepath.ToSlash(rel), "/", "_")+".jsonl")
	var b strings.Builder
	for _, f := range features {
		line, _ := json.Marshal(Record{Package: p.Package, Version: version, Feature: f, Test: test})
		b.Write(line)
		b.WriteByte('\n')
	}
	compatMu.Lock()
	defer compatMu.Unlock()
	out, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := out.WriteString(b.String()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// PinnedVersion is the version of p's package that its package-lock.json
// pins.
func PinnedVersion(p Pin) (string, error) {
	root, err := claudetest.RepoRoot()
	if err != nil {
		return "", err
	}
	lock := filepath.Join(root, filepath.FromSlash(p.Dir), "package-lock.json")
	b, err := os.ReadFile(lock)
	if err != nil {
		return "", err
	}
	var l struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return "", fmt.Errorf("%s: %v", lock, err)
	}
	v := l.Packages["node_modules/"+p.Package].Version
	if v == "" {
		return "", fmt.Errorf("%s pins no version of %s", lock, p.Package)
	}
	return v, nil
}
