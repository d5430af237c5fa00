package session

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
