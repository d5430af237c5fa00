package owner

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// TestToolDetail: a tool update's details for adapters that show them:
// the input and output redacted like a permission prompt's input, the
// diffs and locations, and a long output cut with a word.
func TestToolDetail(t *testing.T) {
	got := toolDetail(projector.ToolUpdate{
		RawInput:  []byte(`{"command": "PASSWORD=hunter2 psql"}`),
		RawOutput: []byte(`{"exit": 0}`),
		Content: []projector.ToolContent{
			{Type: "diff", Path: "a.go", OldText: "x", NewText: "y"},
			{Type: "content", Text: "PASSWORD=hunter2 ok"},
		},
		Locations: []projector.Location{{Path: "a.go", Line: 3}, {Path: "b.go"}},
	})
	want := channels.ToolDetail{
		Input:     `{"command":"PASSWORD=••• psql"}`,
		Output:    "PASSWORD=••• ok",
		Diffs:     []channels.Diff{{Path: "a.go", Old: "x", New: "y"}},
		Locations: []string{"a.go:3", "b.go"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("toolDetail (-want +got):\n%s", d)
	}
	if got := toolDetail(projector.ToolUpdate{RawOutput: []byte(`{"exit":1}`)}); got.Output != `{"exit":1}` || got.Input != "" {
		t.Errorf("raw output only: %+v", got)
	}
	long := toolDetail(projector.ToolUpdate{Content: []projector.ToolContent{{Type: "content", Text: strings.Repeat("é", maxToolDetail)}}})
	if len(long.Output) > maxToolDetail+40 || !strings.HasSuffix(long.Output, "more bytes)") || !strings.HasPrefix(long.Output, "éé") {
		t.Errorf("a long output is %d bytes ending %q, want it cut to %d with a word", len(long.Output), long.Output[len(long.Output)-20:], maxToolDetail)
	}
}

// TestToolDetailRawOutput: Codex (codex-acp 0.16.0) reports a command's
// result only in rawOutput; its details show the command's output (and a
// failing exit code), not the whole JSON. Frames from
// codex-acp.tools.ndjson.
func TestToolDetailRawOutput(t *testing.T) {
	for _, tc := range []struct{ name, raw, want string }{
		{"codex", `{"call_id":"call_fd12a698c7d0","process_id":"3809","turn_id":"01a232fe-d813-7e50-8b4c-df0fac5952ec","completed_at_ms":1796151892137,"command":["/bin/bash","-lc","cat notes.txt"],"cwd":"/workspace","parsed_cmd":[{"type":"read","cmd":"cat notes.txt","name":"notes.txt","path":"notes.txt"}],"source":"unified_exec_startup","stdout":"alpha\nbeta\ngamma\n","stderr":"","aggregated_output":"alpha\nbeta\ngamma\n","exit_code":0,"duration":{"secs":0,"nanos":16334},"formatted_output":"alpha\nbeta\ngamma\n","status":"completed"}`, "alpha\nbeta\ngamma\n"},
		{"codex failing", `{"call_id":"call_34b0e83a2152","command":["/bin/bash","-lc","cat missing.txt"],"cwd":"/workspace","stdout":"cat: missing.txt: No such file or directory\n","stderr":"","aggregated_output":"cat: missing.txt: No such file or directory\n","exit_code":1,"duration":{"secs":0,"nanos":10826},"formatted_output":"cat: missing.txt: No such file or directory\n","status":"failed"}`, "cat: missing.txt: No such file or directory\n(exit code 1)"},
		{"codex silent", `{"command":["/bin/bash","-lc","true"],"stdout":"","stderr":"","aggregated_output":"","exit_code":0,"formatted_output":""}`, ""},
		{"stdout and stderr only", `{"stdout":"out\n","stderr":"err\n","exit_code":2}`, "out\nerr\n(exit code 2)"},
		{"opencode", `{"output":"hello-from-shell\n","metadata":{"output":"hello-from-shell\n","exit":0,"truncated":false}}`, "hello-from-shell\n"},
		{"a string", `"done"`, "done"},
		{"other JSON", `{"exit": 1}`, `{"exit":1}`},
		{"not an object", `[1, 2]`, `[1,2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toolDetail(projector.ToolUpdate{RawOutput: []byte(tc.raw)}).Output; got != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
		})
	}
}
