package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScrubEnv: the variables secrets came from, the platforms' token
// variables and GATEWAY_ settings leave the gateway's environment, so a
// program it starts with the inherited environment (as os/exec does by
// default) gets none; the base variables stay even when a secret setting
// refers to them, and so do GATEWAY_TEST_ and every other variable. The
// configuration still loads from the environment of the start.
func TestScrubEnv(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "gateway.yaml")
	yaml := `agents:
  list:
    a: {command: [a], env: {PATH: "${PATH}:/opt/a", KEY: "${A_KEY}"}}
channels:
  web: {token: "${WEB_SECRET}"}
`
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"A_KEY": "a-key", "WEB_SECRET": "web-secret", "SLACK_BOT_TOKEN": "xoxb-1",
		"GATEWAY_LOG__LEVEL": "debug", "GATEWAY_TEST_KEEP": "kept", "UNRELATED": "kept",
	} {
		t.Setenv(k, v)
	}
	f := runFlags{config: cfgFile, sets: multi{"dataDir=" + dir}}
	cfg, err := f.load()
	if err != nil {
		t.Fatal(err)
	}
	removed := scrubEnv(cfg)
	if diff := cmp.Diff([]string{"A_KEY", "GATEWAY_LOG__LEVEL", "SLACK_BOT_TOKEN", "WEB_SECRET"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	out, err := exec.Command("env").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a-key", "web-secret", "xoxb-1", "GATEWAY_LOG__LEVEL"} {
		if strings.Contains(string(out), s) {
			t.Errorf("a child of the gateway sees %s", s)
		}
	}
	for _, s := range []string{"\nPATH=", "\nGATEWAY_TEST_KEEP=kept\n", "\nUNRELATED=kept\n"} {
		if !strings.Contains("\n"+string(out), s) {
			t.Errorf("a child of the gateway lacks %s", strings.TrimSpace(s))
		}
	}
	again, err := f.load()
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := again.Agents.List["a"].Env["KEY"]; got != "a-key" {
		t.Errorf("after the scrub, a reload gives KEY=%q, want a-key", got)
	}
	if got := again.Log.Level; got != "debug" {
		t.Errorf("after the scrub, a reload gives log.level %q, want debug (GATEWAY_LOG__LEVEL)", got)
	}
}
