package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/agenttest"
	"github.com/acpgw/gateway/internal/fakemodel"
	"github.com/acpgw/gateway/projector"
)

// realTurnTimeout bounds one scenario of one real agent (its start, a
// session and three turns).
const realTurnTimeout = 3 * time.Minute

// The prompts of the real agents' scenario and what the fake model says.
const (
	realHello      = "say hello"
	realHelloText  = "Hello from the fake model, in three pieces."
	realShell      = "make the marker with the shell"
	realShellFile  = "shell-made.txt"
	realShellText  = "Ran touch."
	realShellDone  = "The marker is made."
	realEdit       = "write the rejected file"
	realEditFile   = "rejected.txt"
	realEditText   = "Writing it."
	realEditDone   = "The write was refused."
	realShellCmd   = "touch " + realShellFile
	realEditSource = "refused\n"
)

// toolsOf are the names and arguments of one agent's shell and write
// tools, as its model is offered them.
type toolsOf struct {
	shell     string
	shellArgs func(cwd string) string
	edit      string
	editArgs  func(cwd string) string
	// custom: the edit is a freeform (custom) tool of the Responses API.
	custom bool
}

func jsonArgs(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

var realTools = map[string]toolsOf{
	"gemini": {
		shell:     "run_shell_command",
		shellArgs: func(string) string { return jsonArgs("command", realShellCmd, "description", "make the marker") },
		edit:      "write_file",
		editArgs: func(cwd string) string {
			return jsonArgs("file_path", filepath.Join(cwd, realEditFile), "content", realEditSource)
		},
	},
	"codex": {
		shell: "exec_command",
		// Codex's own sandbox (bubblewrap) cannot nest in the gateway's,
		// so the model asks to run the command outside it, which Codex
		// asks the client about.
		shellArgs: func(string) string {
			return jsonArgs("cmd", realShellCmd, "sandbox_permissions", "require_escalated", "justification", "make the marker")
		},
		edit: "apply_patch",
		editArgs: func(string) string {
			return "*** Begin Patch\n*** Add File: " + realEditFile + "\n+" + strings.TrimSuffix(realEditSource, "\n") + "\n*** End Patch\n"
		},
		custom: true,
	},
	"opencode": {
		shell:     "bash",
		shellArgs: func(string) string { return jsonArgs("command", realShellCmd, "description", "make the marker") },
		edit:      "write",
		editArgs: func(cwd string) string {
			return jsonArgs("filePath", filepath.Join(cwd, realEditFile), "content", realEditSource)
		},
	},
	"qwen": {
		shell:     "run_shell_command",
		shellArgs: func(string) string { return jsonArgs("command", realShellCmd, "description", "make the marker") },
		edit:      "write_file",
		editArgs: func(cwd string) string {
			return jsonArgs("file_path", filepath.Join(cwd, realEditFile), "content", realEditSource)
		},
	},
}

// realScript is the fake model's part for an agent working in cwd.
func realScript(tt toolsOf, cwd string) fakemodel.Script {
	return fakemodel.Script{
		{Prompt: realHello, Steps: []fakemodel.Step{{Text: realHelloText, Chunks: 3}}},
		{Prompt: realShell, Steps: []fakemodel.Step{
			{Text: realShellText, Tool: tt.shell, Args: tt.shellArgs(cwd)},
			{Text: realShellDone},
		}},
		{Prompt: realEdit, Steps: []fakemodel.Step{
			{Text: realEditText, Tool: tt.edit, Args: tt.editArgs(cwd), Custom: tt.custom},
			{Text: realEditDone},
		}},
	}
}

// realHandler records a session's updates and answers permission requests
// by its allow switch: the first allow_once option, or the first
// reject_once one.
type realHandler struct {
	mu          sync.Mutex // guards the fields below
	allow       bool
	updates     []projector.Update
	permissions []agent.PermissionRequest
}

func (h *realHandler) Update(u projector.Update, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updates = append(h.updates, u)
}

func (h *realHandler) Permission(_ context.Context, r agent.PermissionRequest) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.permissions = append(h.permissions, r)
	kind := "reject_once"
	if h.allow {
		kind = "allow_once"
	}
	for _, o := range r.Options {
		if o.Kind == kind {
			return o.ID, true
		}
	}
	return "", false
}

// turn sets the permission answer, clears what was recorded and returns
// a function giving what the next turn recorded.
func (h *realHandler) turn(allow bool) func() ([]projector.Update, []agent.PermissionRequest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.allow, h.updates, h.permissions = allow, nil, nil
	return func() ([]projector.Update, []agent.PermissionRequest) {
		h.mu.Lock()
		defer h.mu.Unlock()
		return slices.Clone(h.updates), slices.Clone(h.permissions)
	}
}

// TestRealAgents runs each pinned real agent (Gemini CLI, codex-acp,
// opencode, Qwen Code) over raw ACP through agent.Start, in its sandbox,
// its network only the fake model server: initialize, session/new, a
// prompt answered with text that arrives whole and in order; a shell tool
// call whose permission the test allows (the file the command makes is
// in the workspace on the host, and the model got the tool's result); a
// write whose permission the test rejects (no file, and the agent goes on
// or ends the turn without writing).
func TestRealAgents(t *testing.T) {
	for _, a := range agenttest.All {
		t.Run(a.Name, func(t *testing.T) {
			// The agents run at once (each has its own fake, workspace and
			// home); nothing in this package counts goroutines.
			t.Parallel()
			tt := realTools[a.Name]
			cwd := t.TempDir()
			// Registered before start's cleanup, so the agent stops first.
			fake := fakemodel.New(t, realScript(tt, cwd))
			spec := a.Spec(t, fake.URL, cwd)
			ctx, cancel := context.WithTimeout(t.Context(), realTurnTimeout)
			defer cancel()
			var fr frames
			log := slog.New(slog.NewTextHandler(claudeLogWriter{t}, nil))
			p := start(t, spec, agent.Options{Logger: log, Frames: fr.sink, StopGrace: time.Second})
			defer func() {
				if t.Failed() {
					fr.mu.Lock()
					for i, l := range fr.lines {
						t.Logf("frame %d %s: %.600s", i, fr.dirs[i], l)
					}
					fr.mu.Unlock()
				}
			}()
			h := &realHandler{}
			s, err := p.NewSession(ctx, cwd, h)
			if err != nil {
				t.Fatalf("NewSession: %v", err)
			}

			// Text, whole and in order.
			got := h.turn(true)
			stop, err := s.Prompt(ctx, realHello)
			if err != nil || stop != "end_turn" {
				t.Fatalf("Prompt(%q) = %q, %v; want end_turn", realHello, stop, err)
			}
			us, _ := got()
			if text := strings.Join(textChunks(us), ""); text != realHelloText {
				t.Errorf("the agent said %q, want the model's %q", text, realHelloText)
			} else {
				agenttest.Proved(t, a.Pin(), agenttest.Text)
			}

			// A shell command, allowed.
			got = h.turn(true)
			stop, err = s.Prompt(ctx, realShell)
			if err != nil || stop != "end_turn" {
				t.Fatalf("Prompt(%q) = %q, %v; want end_turn", realShell, stop, err)
			}
			us, perms := got()
			if len(perms) == 0 {
				t.Errorf("no permission was asked for %q", realShellCmd)
			}
			if _, err := os.Stat(filepath.Join(cwd, realShellFile)); err != nil {
				t.Errorf("the allowed command's file is not in the workspace: %v", err)
			}
			if !fakeSawToolResult(fake, realShell) {
				t.Errorf("the model never got the shell tool's result: %+v", fake.Main())
			}
			if text := strings.Join(textChunks(us), ""); !strings.Contains(text, realShellDone) {
				t.Errorf("after the tool the agent said %q, want %q in it", text, realShellDone)
			}
			if !hasTool(us) {
				t.Errorf("no tool call was reported for the shell command")
			}

			// A write, rejected.
			got = h.turn(false)
			stop, err = s.Prompt(ctx, realEdit)
			if err != nil || (stop != "end_turn" && stop != "cancelled") {
				t.Fatalf("Prompt(%q) = %q, %v; want end_turn or cancelled", realEdit, stop, err)
			}
			_, perms = got()
			if len(perms) == 0 {
				t.Errorf("no permission was asked for the write")
			}
			if _, err := os.Stat(filepath.Join(cwd, realEditFile)); !os.IsNotExist(err) {
				t.Errorf("the rejected write's file: %v, want none", err)
			}
			t.Logf("%s: the rejected write ended the turn %q", a.Name, stop)
			if !t.Failed() {
				agenttest.Proved(t, a.Pin(), agenttest.Tools, agenttest.Permissions)
			}
		})
	}
}

// fakeSawToolResult reports whether the fake answered a step after a tool
// result of the turn prompt selects.
func fakeSawToolResult(fake *fakemodel.Server, prompt string) bool {
	for _, c := range fake.Main() {
		if c.Prompt == prompt && c.Step > 0 {
			return true
		}
	}
	return false
}

func hasTool(us []projector.Update) bool {
	for _, u := range us {
		if u.Tag == projector.TagToolCall || u.Tag == projector.TagToolCallUpdate {
			return true
		}
	}
	return false
}
