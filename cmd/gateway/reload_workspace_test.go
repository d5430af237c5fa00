package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/workspace"
)

// A reload's workspace settings apply to the threads whose workspace is
// made after it: agents.list.NAME.workspace (shared, then dir) and
// workspace.keep (0, never swept, then an hour).
func TestReloadAppliesWorkspace(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "demo-state")
	yaml := func(mode, keep string) string {
		return fmt.Sprintf("workspace:\n  keep: %s\nagents:\n  default: second\n  list:\n    second:\n      command: [%q, demo-agent, --state-dir, %q]\n      workspace: %s\n",
			keep, exe, state, mode)
	}
	cfg, f := testConfig(t, yaml("shared", "0s"))
	reloaded := make(chan struct{}, 4)
	g := startGateway(t, cfg, f, hooks{reloaded: reloaded})
	c := webClient(t, g)
	chat := func(th, text, answer string) {
		t.Helper()
		c.post("api/threads/"+th+"/messages", map[string]string{"author": "ann", "text": text})
		c.waitMessage(th, answer, func(m webMessage) bool { return m.Role == "assistant" && m.Text == answer })
	}
	ref := func(th string) channels.ThreadRef {
		return channels.ThreadRef{Platform: "web", Channel: web.Channel, Thread: th}
	}
	before := c.post("api/threads", map[string]any{})["id"].(string)
	chat(before, "echo one", "one")
	if info, ok := g.spaces.Info(ref(before)); ok && info.Mode != workspace.Shared {
		t.Fatalf("before the reload the thread got %+v, want the shared directory", info)
	}

	if err := os.WriteFile(f.config, []byte(yaml("dir", "1h")), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloaded:
	case <-time.After(20 * time.Second):
		t.Fatal("the configuration change was not applied")
	}
	after := c.post("api/threads", map[string]any{})["id"].(string)
	chat(after, "echo two", "two")
	info, ok := g.spaces.Info(ref(after))
	if !ok || info.Mode != workspace.Dir {
		t.Fatalf("after the reload the thread got %+v (%v), want a directory of its own", info, ok)
	}
	if _, err := os.Stat(info.Path); err != nil {
		t.Fatalf("the thread's directory: %v", err)
	}

	// Two hours on, with no activity known, the new keep removes it.
	removed, err := g.spaces.Sweep(t.Context(), time.Now().Add(2*time.Hour), func(channels.ThreadRef) time.Time { return time.Time{} })
	if err != nil || len(removed) != 1 || removed[0].Path != info.Path {
		t.Errorf("sweep after the reload removed %+v, %v; want %s (workspace.keep: 1h)", removed, err, info.Path)
	}
}
