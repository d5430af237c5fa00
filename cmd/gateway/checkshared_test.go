package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWarnsSharedRootOrHome: gateway check warns of a shared agent
// whose directory is / or the gateway's home, naming its key, and of no
// other.
func TestCheckWarnsSharedRootOrHome(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	file := filepath.Join(t.TempDir(), "g.yaml")
	yaml := "agents:\n  list:\n" +
		"    rooted:\n      command: [x]\n      cwd: /\n" +
		"    homed:\n      command: [x]\n      cwd: " + home + "\n" +
		"    good:\n      command: [x]\n      cwd: " + proj + "\n" +
		"    ownDirs:\n      command: [x]\n      cwd: /\n      workspace: dir\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runCLI(t, "", "check", "--config", file)
	if err != nil {
		t.Fatalf("check: %v\n%s", err, errOut)
	}
	for _, want := range []string{"warning: agents.list.rooted: its threads will not start: workspace: the shared workspace is /", "warning: agents.list.homed: its threads will not start: workspace: the shared workspace is the home directory"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check's warnings lack %q:\n%s", want, errOut)
		}
	}
	for _, not := range []string{"agents.list.good", "agents.list.ownDirs"} {
		if strings.Contains(errOut, not) {
			t.Errorf("check warns of %s:\n%s", not, errOut)
		}
	}
}
