package config

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// platformWords are what would tell that package config knows a chat
// platform: the names of this build's platforms and their words for
// their spaces, and the platforms' token prefixes. The singular
// "workspace" is the gateway's own word for a thread's working directory
// (package workspace, agents.list.NAME.workspace); Slack's spaces are
// "workspaces" in the configuration.
var platformWords = regexp.MustCompile(`(?i)\b(discord|slack|web|guilds?|workspaces|userGroups?|roles?|teams?)\b|xapp-|xoxb-`)

// TestNoPlatformNamed: package config composes the platforms' sections
// without naming a platform (outside its tests), and imports no adapter
// package, so that adding a platform touches its adapter and cmd/gateway
// only.
func TestNoPlatformNamed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		checked++
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := platformWords.FindString(line); m != "" {
				t.Errorf("%s:%d names a platform (%q): %s", f, i+1, m, strings.TrimSpace(line))
			}
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, data, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/acpgw/gateway/channels/") {
				t.Errorf("%s imports %s: config must not import an adapter package", f, path)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files, want the package's sources", checked)
	}
}
