package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On its embedded default the gateway's demo agent works in a directory
// of the thread's own under dataDir: "write a file and send it" leaves
// nothing in the directory the gateway was started from.
func TestDemoAgentWritesInItsThreadsDirectory(t *testing.T) {
	cfg, f := testConfig(t, "")
	g := startGateway(t, cfg, f, hooks{})
	c := webClient(t, g)
	th := c.post("api/threads", map[string]any{})["id"].(string)
	c.post("api/threads/"+th+"/messages", map[string]string{"text": "write a file and send it"})
	c.waitMessage(th, "the report sent", func(m webMessage) bool {
		return m.Role == "assistant" && strings.Contains(m.Text, "sent demo-report.txt")
	})
	c.waitIdle(th)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(wd, "demo-report.txt")); err == nil {
		os.Remove(filepath.Join(wd, "demo-report.txt"))
		t.Fatalf("the demo agent wrote demo-report.txt into the gateway's directory %s", wd)
	}
	found, _ := filepath.Glob(filepath.Join(cfg.DataDir, "workspaces", "web", "*", th, "demo-report.txt"))
	if len(found) != 1 {
		t.Errorf("the report in the thread's directory under %s: %v, want one", cfg.DataDir, found)
	}
}
