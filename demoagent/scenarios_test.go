package demoagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// runPrompt runs one prompt in a new session and returns the frames the
// agent wrote for it.
func runPrompt(t *testing.T, h *harness, prompt string) (acp.PromptResponse, error, []frame) {
	t.Helper()
	id := h.newSession()
	before := len(h.tap.frames(t))
	resp, err := h.prompt(id, prompt)
	return resp, err, h.tap.frames(t)[before:]
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestScenarios(t *testing.T) {
	tools := []string{
		"text",
		"tool_call call_1_1 pending Terminal",
		"tool_call_update call_1_1 in_progress Run ls -la",
		"tool_call_update call_1_1 in_progress Run ls -la",
		"tool_call_update call_1_1 in_progress Run ls -la",
		"tool_call_update call_1_1 completed -",
		"usage 1800/200000",
		"text",
		"tool_call call_1_2 pending Read main.go",
		"tool_call call_1_2 in_progress Read main.go",
		"tool_call_update call_1_2 completed -",
		"usage 1800/200000",
		"text",
		"tool_call call_1_3 pending go test ./...",
		"tool_call_update call_1_3 in_progress -",
		"tool_call_update call_1_3 failed -",
		"tool_call_update call_1_2 - Read main.go (8 lines)",
		"usage 1800/200000",
		"text",
	}
	plan := []string{
		"text",
		"plan pending,pending,pending",
		"plan in_progress,pending,pending",
		"text",
		"plan completed,in_progress,pending",
		"text",
		"plan completed,completed,in_progress",
		"text",
		"plan completed,completed,completed",
		"text",
	}
	tests := []struct {
		prompt    string
		wantStop  acp.StopReason
		wantShape []string
		wantText  string                                    // if not empty
		check     func(t *testing.T, ss []step, fs []frame) // extra checks
	}{
		{prompt: "hello", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: helloText,
			check: func(t *testing.T, ss []step, _ []frame) {
				if n := len(ss); n < 8 || n > 12 {
					t.Errorf("%d chunks, want about 10", n)
				}
			}},
		{prompt: "what can you do?", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: helloText},
		{prompt: "", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: helloText},
		{prompt: "  ECHO  two  spaces\nand a line ", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: "two  spaces\nand a line "},
		{prompt: "echo", wantStop: acp.StopReasonEndTurn},
		{prompt: "/help", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"},
			check: func(t *testing.T, ss []step, _ []frame) {
				got := text(ss)
				for _, s := range scenarioTable() {
					if !strings.Contains(got, "`"+s.usage+"`: "+s.about) {
						t.Errorf("help lacks %q", s.usage)
					}
				}
				for _, want := range []string{"- `model` (model): demo-fast, demo-smart; default demo-fast\n", "- `mode` (mode): default, plan", "- `effort` (thought_level): medium, low, high", "session/list", "session/close"} {
					if !strings.Contains(got, want) {
						t.Errorf("help lacks %q", want)
					}
				}
				if n, want := strings.Count(got, "\n"), len(scenarioTable())+1+1+len(optionDefs)+1; n != want {
					t.Errorf("help has %d lines, want %d", n, want)
				}
			}},
		{prompt: "markdown", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: markdownDoc,
			check: func(t *testing.T, ss []step, _ []frame) {
				for i, s := range ss {
					if n := len(s.text); (n < 5 && i < len(ss)-1) || n > 20+utf8.UTFMax || !utf8.ValidString(s.text) {
						t.Errorf("chunk %d is %q (%d bytes), want 5–20 bytes of valid UTF-8", i, s.text, n)
					}
				}
				for _, want := range []string{"\n# ", "\n## ", "\n- ", "\n1. ", "\n|---|", "```go\n", "```sh\n"} {
					if !strings.Contains("\n"+markdownDoc, want) {
						t.Errorf("markdown lacks %q", want)
					}
				}
				if n := len(markdownDoc); n < 3600 || n > 4400 {
					t.Errorf("markdown is %d bytes, want about 4,000", n)
				}
			}},
		{prompt: "storm 2", wantStop: acp.StopReasonEndTurn, wantText: "Let me look around. All read.", wantShape: []string{
			"text",
			"tool_call call_1_1 in_progress Read file0.go",
			"tool_call_update call_1_1 completed -",
			"tool_call call_1_2 in_progress Read file1.go",
			"tool_call_update call_1_2 completed -",
			"text",
		}},
		{prompt: "storm 101", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}},
		{prompt: "tools", wantStop: acp.StopReasonEndTurn, wantShape: tools,
			check: func(t *testing.T, ss []step, fs []frame) {
				var ups []wireUpdate
				for _, f := range fs {
					var p struct{ Update wireUpdate }
					if f.Method == acp.ClientMethodSessionUpdate && json.Unmarshal(f.Params, &p) == nil && strings.HasPrefix(p.Update.SessionUpdate, "tool_call") {
						ups = append(ups, p.Update)
					}
				}
				if got := string(ups[0].RawInput); got != `{}` {
					t.Errorf("first tool_call rawInput = %s, want {}", got)
				}
				if got, want := string(ups[1].RawInput), `{"command":"ls -la"}`; got != want {
					t.Errorf("first update rawInput = %s, want %s", got, want)
				}
				if diff := cmp.Diff(ups[1], ups[2]); diff != "" {
					t.Errorf("repeated snapshots differ:\n%s", diff)
				}
				loc := ups[5].Locations
				if len(loc) != 1 || loc[0].Path != "/work/demo/main.go" || loc[0].Line == nil || *loc[0].Line != 1 {
					t.Errorf("read tool locations = %+v, want /work/demo/main.go line 1", loc)
				}
			}},
		{prompt: "plan", wantStop: acp.StopReasonEndTurn, wantShape: plan},
		{prompt: "slow 5", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: "the quick brown fox jumps "},
		{prompt: "slow many", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"},
			wantText: `usage: slow [n] (want a whole number from 1 to 100000, got "many")`},
		{prompt: "snapshot", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"},
			check: func(t *testing.T, ss []step, _ []frame) {
				for i := 1; i < len(ss); i++ {
					if !strings.HasPrefix(ss[i].text, ss[i-1].text) || len(ss[i].text) <= len(ss[i-1].text) {
						t.Errorf("chunk %d %q does not extend chunk %d %q", i, ss[i].text, i-1, ss[i-1].text)
					}
				}
				if got := ss[len(ss)-1].text; got != snapshotText {
					t.Errorf("last snapshot %q, want %q", got, snapshotText)
				}
			}},
		{prompt: "usage", wantStop: acp.StopReasonEndTurn, wantShape: append(repeat("usage 4200/200000", 50), "text"),
			wantText: "That was fifty identical usage updates."},
		{prompt: "thought", wantStop: acp.StopReasonEndTurn, wantShape: []string{"thought", "text"}},
		{prompt: "title  Fix the greeting ", wantStop: acp.StopReasonEndTurn, wantShape: []string{"info Fix the greeting", "text"}},
		{prompt: "title", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: "usage: title <text> (the title is empty)"},
		{prompt: "unknown", wantStop: acp.StopReasonEndTurn, wantShape: []string{unknownTag, "text"},
			check: func(t *testing.T, _ []step, fs []frame) {
				var p struct{ Update map[string]any }
				json.Unmarshal(fs[0].Params, &p)
				if p.Update["title"] == nil || p.Update["content"] == nil {
					t.Errorf("unknown update %v, want title and content", p.Update)
				}
			}},
		{prompt: "burst 300", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"},
			check: func(t *testing.T, ss []step, _ []frame) {
				for i, s := range ss {
					if want := fmt.Sprintf("%d ", i); s.text != want {
						t.Fatalf("chunk %d = %q, want %q", i, s.text, want)
					}
				}
			}},
		{prompt: "slow-tool 600", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text", "tool_call call_1_1 in_progress Run make", "tool_call_update call_1_1 completed -", "text"}, wantText: "Building. Built."},
		{prompt: "silent 600", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: "Thinking… done."},
		{prompt: "silent -1", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"},
			wantText: `usage: silent [seconds] (want a whole number from 1 to 86400, got "-1")`},
		{prompt: "ignore-cancel 1", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}, wantText: "tick 1 tick 2 tick 3 tick 4 tick 5 "},
		{prompt: "max-tokens", wantStop: acp.StopReasonMaxTokens, wantShape: []string{"text"}},
		{prompt: "refuse", wantStop: acp.StopReasonRefusal},
		{prompt: "stop", wantStop: acp.StopReasonEndTurn, wantShape: []string{"text"}},
	}
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, Options{})
				defer h.stop()
				h.initialize()
				resp, err, fs := runPrompt(t, h, tc.prompt)
				if err != nil {
					t.Fatalf("prompt: %v", err)
				}
				if resp.StopReason != tc.wantStop {
					t.Errorf("stopReason = %q, want %q", resp.StopReason, tc.wantStop)
				}
				ss := steps(t, fs)
				if diff := cmp.Diff(tc.wantShape, squash(ss)); diff != "" {
					t.Errorf("updates (-want +got):\n%s", diff)
				}
				if tc.wantText != "" {
					if got := text(ss); got != tc.wantText {
						t.Errorf("text = %q, want %q", got, tc.wantText)
					}
				}
				if tc.check != nil {
					tc.check(t, ss, fs)
				}
			})
		})
	}
}

func TestErrorScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.initialize()
		_, err, _ := runPrompt(t, h, "error")
		if got, want := errCode(err), -32603; got != want {
			t.Errorf("error scenario: code %d (%v), want %d", got, err, want)
		}
	})
}

// TestBurst checks that a client receives every chunk of the default
// burst, in order.
func TestBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.initialize()
		resp, err, _ := runPrompt(t, h, "burst")
		if err != nil || resp.StopReason != acp.StopReasonEndTurn {
			t.Fatalf("burst = %q, %v; want end_turn", resp.StopReason, err)
		}
		got := h.client.received()[2:]
		if len(got) != 10_000 {
			t.Fatalf("client received %d chunks, want 10000", len(got))
		}
		for i, n := range got {
			if c := n.Update.AgentMessageChunk; c == nil || c.Content.Text.Text != fmt.Sprintf("%d ", i) {
				t.Fatalf("chunk %d = %+v, want %q", i, n.Update, fmt.Sprintf("%d ", i))
			}
		}
	})
}

func TestCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		h.initialize()
		id := h.newSession()
		before := len(h.tap.frames(t))
		promptErr := make(chan error, 1)
		go func() {
			_, err := h.prompt(id, "crash")
			promptErr <- err
		}()
		if err := h.wait(); !errors.Is(err, ErrCrash) {
			t.Errorf("Run = %v, want ErrCrash", err)
		}
		if err := <-promptErr; err == nil {
			t.Errorf("prompt succeeded, want an error: the agent died mid-turn")
		}
		fs := h.tap.frames(t)[before:]
		if diff := cmp.Diff([]string{"text"}, squash(steps(t, fs))); diff != "" {
			t.Errorf("updates (-want +got):\n%s", diff)
		}
		for _, f := range fs {
			if f.Method == "" {
				t.Errorf("the crashed prompt was answered: %s %s", f.Result, f.Error)
			}
		}
	})
}

// permit returns a client answer that selects option id.
func permit(id string) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	return func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}
	}
}

func TestPermission(t *testing.T) {
	allowed := []string{"text", "permission call_1_1", "tool_call call_1_1 pending Edit main.go", "tool_call_update call_1_1 completed -", "text"}
	tests := []struct {
		name      string
		prompt    string
		answer    func(h *harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse
		wantStop  acp.StopReason
		wantShape []string
		wantText  string
	}{
		{"allow once", "permission", func(*harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
			return permit(optAllowOnce)
		},
			acp.StopReasonEndTurn, allowed, "I need to edit main.go. Applied the edit."},
		{"allow always", "permission", func(*harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
			return permit(optAllowAlways)
		},
			acp.StopReasonEndTurn, allowed, "I need to edit main.go. Applied the edit."},
		{"reject", "permission", func(*harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
			return permit(optRejectOnce)
		},
			acp.StopReasonEndTurn,
			[]string{"text", "permission call_1_1", "tool_call call_1_1 pending Edit main.go", "tool_call_update call_1_1 failed -", "text"},
			"I need to edit main.go. Okay, I left main.go alone."},
		{"cancelled outcome", "permission", func(*harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse { return nil },
			acp.StopReasonCancelled, []string{"text", "permission call_1_1", "tool_call call_1_1 pending Edit main.go"}, "I need to edit main.go."},
		{"session/cancel", "permission", func(h *harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
			return func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
				synctest.Wait() // the tool_call is out; the agent waits for this answer
				h.conn.Cancel(h.t.Context(), acp.CancelNotification{SessionId: p.SessionId})
				synctest.Wait() // the agent has seen the cancel
				return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
			}
		}, acp.StopReasonCancelled, []string{"text", "permission call_1_1", "tool_call call_1_1 pending Edit main.go"}, "I need to edit main.go."},
		{"twice", "permission 2", func(*harness) func(acp.RequestPermissionRequest) acp.RequestPermissionResponse {
			return permit(optAllowOnce)
		},
			acp.StopReasonEndTurn,
			append(slices.Clone(allowed), "permission call_1_2", "tool_call call_1_2 pending Edit main.go", "tool_call_update call_1_2 completed -", "text"),
			"I need to edit main.go. Applied the edit. Applied the edit."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, Options{})
				defer h.stop()
				h.client.setPermit(tc.answer(h))
				h.initialize()
				resp, err, fs := runPrompt(t, h, tc.prompt)
				if err != nil {
					t.Fatalf("prompt: %v", err)
				}
				if resp.StopReason != tc.wantStop {
					t.Errorf("stopReason = %q, want %q", resp.StopReason, tc.wantStop)
				}
				ss := steps(t, fs)
				if diff := cmp.Diff(tc.wantShape, squash(ss)); diff != "" {
					t.Errorf("wire order (-want +got):\n%s", diff)
				}
				if got := text(ss); got != tc.wantText {
					t.Errorf("text = %q, want %q", got, tc.wantText)
				}
			})
		})
	}
}

func TestPermissionRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.client.setPermit(permit(optAllowOnce))
		h.initialize()
		if _, err, _ := runPrompt(t, h, "permission"); err != nil {
			t.Fatal(err)
		}
		h.client.mu.Lock()
		asks := h.client.asks
		h.client.mu.Unlock()
		if len(asks) != 1 {
			t.Fatalf("got %d permission requests, want 1", len(asks))
		}
		tc := asks[0].ToolCall
		if tc.ToolCallId != "call_1_1" || tc.Title == nil || *tc.Title != "Edit main.go" || tc.Kind == nil || *tc.Kind != acp.ToolKindEdit {
			t.Errorf("toolCall = %+v, want call_1_1 \"Edit main.go\" edit", tc)
		}
		wantInput := map[string]any{"path": "/work/demo/main.go", "old_string": "\tfmt.Println(\"hello\")\n", "new_string": "\tfmt.Println(\"hello, gateway\")\n"}
		if diff := cmp.Diff(wantInput, tc.RawInput); diff != "" {
			t.Errorf("rawInput (-want +got):\n%s", diff)
		}
		if len(tc.Content) != 1 || tc.Content[0].Diff == nil || tc.Content[0].Diff.Path != "/work/demo/main.go" ||
			tc.Content[0].Diff.OldText == nil || tc.Content[0].Diff.NewText != wantInput["new_string"] {
			t.Errorf("content = %+v, want one diff of main.go", tc.Content)
		}
		var opts []string
		for _, o := range asks[0].Options {
			opts = append(opts, fmt.Sprintf("%s %s %s", o.OptionId, o.Kind, o.Name))
		}
		want := []string{"allow_once allow_once Allow", "allow_always allow_always Always allow", "reject_once reject_once Reject"}
		if diff := cmp.Diff(want, opts); diff != "" {
			t.Errorf("options (-want +got):\n%s", diff)
		}
	})
}

func TestHistoryIsSaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		h := start(t, Options{StateDir: dir})
		defer h.stop()
		h.initialize()
		id := h.newSession()
		for _, p := range []string{"snapshot", "burst 3", "title Greeting fix", "error"} {
			h.prompt(id, p)
		}
		rec, err := store{dir: dir}.load(string(id))
		if err != nil {
			t.Fatal(err)
		}
		want := []message{
			{roleUser, "snapshot"}, {roleAgent, snapshotText},
			{roleUser, "burst 3"}, {roleAgent, "0 1 2 "},
			{roleUser, "title Greeting fix"}, {roleAgent, `I set the session title to "Greeting fix".`},
			{roleUser, "error"},
		}
		if diff := cmp.Diff(want, rec.History); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if rec.Title != "Greeting fix" {
			t.Errorf("title = %q, want %q", rec.Title, "Greeting fix")
		}
	})
}

// "Always allow" holds for the session's later edits, as real agents
// keep it: the demo asks once; "Allow" asks each time. (A new session
// asks again.)
func TestAlwaysAllowAsksOnce(t *testing.T) {
	for _, tc := range []struct {
		option string
		asks   int
	}{{optAllowAlways, 1}, {optAllowOnce, 3}} {
		t.Run(tc.option, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, Options{})
				defer h.stop()
				h.client.setPermit(permit(tc.option))
				h.initialize()
				id := h.newSession()
				for _, prompt := range []string{"permission 2", "permission"} {
					if _, err := h.prompt(id, prompt); err != nil {
						t.Fatal(err)
					}
				}
				h.client.mu.Lock()
				n := len(h.client.asks)
				h.client.mu.Unlock()
				if n != tc.asks {
					t.Errorf("%s: asked %d times for three edits, want %d", tc.option, n, tc.asks)
				}
			})
		})
	}
}
