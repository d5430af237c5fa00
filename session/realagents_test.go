package session_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/agenttest"
	"github.com/acpgw/gateway/internal/fakemodel"
)

// The thread's prompts for the real agents and the fake model's answers.
const (
	rtHello      = "greet the thread"
	rtHelloText  = "Hello, thread, from the fake model."
	rtShell      = "touch the thread marker"
	rtShellFile  = "thread-marker.txt"
	rtShellDone  = "The thread marker is there."
	rtHold       = "start the long answer"
	rtHoldText   = "Working on the long answer"
	rtResume     = "what did I ask first"
	rtResumeText = "You asked me to greet the thread."
)

// rtShellTool is each agent's shell tool and its arguments for the
// marker command (Codex asks to run outside its own sandbox, which cannot
// nest in the gateway's, and so asks the client).
var rtShellTool = map[string][2]string{
	"gemini":   {"run_shell_command", `{"command":"touch ` + rtShellFile + `","description":"marker"}`},
	"codex":    {"exec_command", `{"cmd":"touch ` + rtShellFile + `","sandbox_permissions":"require_escalated","justification":"marker"}`},
	"opencode": {"bash", `{"command":"touch ` + rtShellFile + `","description":"marker"}`},
	"qwen":     {"run_shell_command", `{"command":"touch ` + rtShellFile + `","description":"marker"}`},
}

// loadBroken are the agents whose session/load in a new process fails by
// their own bug: Gemini CLI 0.61.0 starts a fresh recording of the session
// under the file name of the minute, so within the minute it saved the
// conversation in, it overwrites it before reading it ("No previous
// sessions found for this project."). Whether it loads depends on the
// clock; for it the test checks only what the gateway guarantees either
// way: the prompt after the restart is answered in the thread.
var loadBroken = map[string]bool{"gemini": true}

// TestRealAgentsInThread runs a whole thread with each pinned real agent
// (sandboxed, against the fake model API): a text answer, a shell command
// allowed with the prompt's button, a stop while the model is answering,
// and, after the gateway and so the agent's process are gone, a prompt in
// the same thread whose request to the model carries the earlier
// conversation (the session was loaded, not started afresh).
func TestRealAgentsInThread(t *testing.T) {
	for _, a := range agenttest.All {
		t.Run(a.Name, func(t *testing.T) {
			shell := rtShellTool[a.Name]
			cwd := t.TempDir()
			fake := fakemodel.New(t, fakemodel.Script{
				{Prompt: rtHello, Steps: []fakemodel.Step{{Text: rtHelloText, Chunks: 3}}},
				{Prompt: rtShell, Steps: []fakemodel.Step{{Tool: shell[0], Args: shell[1]}, {Text: rtShellDone}}},
				{Prompt: rtHold, Steps: []fakemodel.Step{{Text: rtHoldText, Hold: true}}},
				{Prompt: rtResume, Steps: []fakemodel.Step{{Text: rtResumeText}}},
			})
			spec := a.Spec(t, fake.URL, cwd)
			rec := channeltest.New(channeltest.Options{Platform: "web", Edit: true, Prompt: true, Limits: channels.Limits{MaxMessageChars: 4000}})
			e := newEnv(t, envOptions{recorder: rec, spec: &spec, rec: channeltest.Options{Platform: "web"}})
			th := e.rec.Thread("real-" + a.Name)

			e.say(th, ann, rtHello)
			if end := claudeEnd(e, th); end.StopReason != "end_turn" {
				t.Fatalf("first turn ended %q", end.StopReason)
			}
			if got := e.text(th); !strings.Contains(got, rtHelloText) {
				t.Errorf("thread text %q, want the model's %q", got, rtHelloText)
			}

			e.say(th, ann, rtShell)
			var asked []string
			for {
				op := claudeOp(e, th, "a permission prompt or the turn's end", func(op channeltest.Op) bool {
					return (op.Op == "turn_end" && len(asked) > 0) || (op.Op == "prompt" && !slices.Contains(asked, string(op.Msg)))
				})
				if op.Op == "turn_end" {
					break
				}
				asked = append(asked, string(op.Msg))
				// The agents' own ids of their allow_once options.
				i := slices.IndexFunc(op.Options, func(o string) bool {
					_, id, _ := strings.Cut(o, "/")
					return slices.Contains([]string{"proceed_once", "allow_once", "once"}, id)
				})
				if i < 0 {
					t.Fatalf("prompt %q has options %v, none allowing once", op.Text, op.Options)
				}
				if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, op.Options[i]); err != nil {
					t.Fatal(err)
				}
			}
			if end := claudeEnd(e, th); end.StopReason != "end_turn" {
				t.Errorf("the shell turn ended %q", end.StopReason)
			}
			if _, err := os.Stat(filepath.Join(cwd, rtShellFile)); err != nil {
				t.Errorf("the allowed command's file: %v", err)
			}
			if got := e.text(th); !strings.Contains(got, rtShellDone) {
				t.Errorf("thread text %q, want the model's %q after the tool", got, rtShellDone)
			}

			e.say(th, ann, rtHold)
			select {
			case <-fake.Held(1):
			case <-claudeCtx(t).Done():
				t.Fatalf("the model was never asked %q; calls %+v", rtHold, fake.Main())
			}
			e.say(th, ann, "stop")
			if end := claudeEnd(e, th); end.StopReason != "cancelled" {
				t.Errorf("the stopped turn ended %q, want cancelled", end.StopReason)
			}
			b1, _, _ := e.st.Binding(e.ctx(), th)
			e.close()

			// A new gateway: the agent's process is gone.
			e2 := newEnv(t, envOptions{recorder: rec, spec: &spec, rec: channeltest.Options{Platform: "web"}, dir: e.dir})
			e2.say(th, ann, rtResume)
			if end := claudeEnd(e2, th); end.StopReason != "end_turn" {
				t.Fatalf("the turn after the restart ended %q", end.StopReason)
			}
			var req *fakemodel.Request
			for _, c := range fake.Main() {
				if c.Prompt == rtResume {
					req = &c.Req
				}
			}
			if req == nil {
				t.Fatalf("the model was never asked %q", rtResume)
			}
			b2, _, _ := e2.st.Binding(e2.ctx(), th)
			if loadBroken[a.Name] {
				t.Logf("%s: session %q after the restart (was %q): its session/load is broken, see loadBroken", a.Name, b2.SessionID, b1.SessionID)
			} else if !slices.ContainsFunc(req.Messages, func(m fakemodel.Message) bool {
				return m.Role == "user" && strings.Contains(m.Text, rtHello) && !strings.Contains(m.Text, rtResume)
			}) {
				t.Errorf("after the restart the model got no earlier conversation (the session was not resumed): %+v", req.Messages)
			}
			if !loadBroken[a.Name] && (b2.SessionID != b1.SessionID || b1.SessionID == "") {
				t.Errorf("session %q after the restart, want %q loaded", b2.SessionID, b1.SessionID)
			}
			if got := e2.text(th); !strings.Contains(got, rtResumeText) {
				t.Errorf("thread text %q, want the model's %q", got, rtResumeText)
			}
		})
	}
}
