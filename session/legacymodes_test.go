package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// An agent with legacy modes only (no config options): /mode lists its
// modes and sets one with session/set_mode, which the agent saves; the
// choice is set again on the thread's next session.
func TestLegacyModesEndToEnd(t *testing.T) {
	state := t.TempDir()
	spec := demoSpec(state)
	spec.Command = append(spec.Command, "--legacy-modes")
	e := newEnv(t, envOptions{spec: &spec})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "legacy"}
	agentModes := func() []string {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(state, "demo-*.json"))
		var out []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Mode string `json:"mode"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Mode)
		}
		return out
	}

	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.command(th, bob, "/mode")
	e.waitOp(th, "the modes", isReply("Default (current), Plan"))

	e.command(th, ann, "/mode plan")
	e.waitOp(th, "the confirmation", hasText("Ann set the mode to Plan."))
	if got := agentModes(); len(got) != 1 || got[0] != "plan" {
		t.Fatalf("the agent's modes = %q, want plan", got)
	}
	if n := e.framesWith(`"method":"session/set_mode"`); n != 1 {
		t.Errorf("%d session/set_mode requests, want 1", n)
	}
	if n := e.framesWith(`"method":"session/set_config_option"`); n != 0 {
		t.Errorf("%d session/set_config_option requests to an agent without config options", n)
	}

	e.command(th, ann, "/new")
	e.waitOp(th, "the new session", hasText("Ann ended this thread's session"))
	e.say(th, ann, "hello again")
	e.waitEnd(th)
	if n := e.framesWith(`"method":"session/set_mode"`); n != 2 {
		t.Errorf("%d session/set_mode requests, want 2 (the new session's too)", n)
	}
	if got := agentModes(); len(got) != 2 || got[0] != "plan" || got[1] != "plan" {
		t.Errorf("the agent's modes = %q, want plan in both sessions", got)
	}
}
