package acpwire

import (
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// TestStreams decodes every line of every recorded stream and compares
// each frame with the encoding/json reference reading.
func TestStreams(t *testing.T) {
	for _, file := range streamFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var f Frame // reused, as the gateway does
			tags := map[string]int{}
			for n, line := range readLines(t, file) {
				if err := Decode(line, &f); err != nil {
					t.Errorf("line %d: Decode: %v", n+1, err)
					continue
				}
				want, err := refDecode(line)
				if err != nil {
					t.Errorf("line %d: reference: %v", n+1, err)
					continue
				}
				if diff := cmp.Diff(want, gotFrame(&f)); diff != "" {
					t.Errorf("line %d: frame mismatch (-want +got):\n%s", n+1, diff)
				}
				if f.Method == "session/update" {
					tags[f.Update.RawTag]++
				}
			}
			if len(tags) == 0 {
				t.Errorf("no session/update frames in %s", file)
			}
		})
	}
}

// TestStreamsTotals checks a few facts of the streams' ground truth, so the
// decoder is known to see what the recordings hold.
func TestStreamsTotals(t *testing.T) {
	tests := []struct {
		file    string
		text    string // prefix of the concatenated agent_message_chunk text
		thought int    // agent_thought_chunk frames
		tools   int    // distinct tool call ids
		unknown int    // frames with an unknown tag
		stops   []string
	}{
		{file: "claude-agent-acp.three-tools.ndjson", tools: 3, stops: []string{"end_turn"}},
		{file: "claude-agent-acp.two-turns.ndjson", text: "OKOK", stops: []string{"end_turn", "end_turn"}},
		{file: "synthetic.tool-storm.ndjson", tools: 12, stops: []string{"end_turn"}},
		{file: "synthetic.future-variants.ndjson", unknown: 0}, // its notice, subagent_update, compaction and plan_update tags are all known
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			var (
				f       Frame
				text    string
				tools   = map[projector.ToolCallID]bool{}
				unknown int
				stops   []string
			)
			for _, line := range readLines(t, filepath.Join("testdata", tc.file)) {
				if err := Decode(line, &f); err != nil {
					t.Fatal(err)
				}
				if f.StopReason != "" {
					stops = append(stops, f.StopReason)
				}
				if f.Method != "session/update" {
					continue
				}
				switch f.Update.Tag {
				case projector.TagAgentMessageChunk:
					text += f.Update.Text
				case projector.TagToolCall, projector.TagToolCallUpdate:
					tools[f.Update.Tool.ID] = true
				case projector.TagUnknown:
					unknown++
				}
			}
			if tc.text != "" && text != tc.text {
				t.Errorf("text = %q, want %q", text, tc.text)
			}
			if tc.tools != 0 && len(tools) != tc.tools {
				t.Errorf("tool calls = %d, want %d", len(tools), tc.tools)
			}
			if unknown != tc.unknown {
				t.Errorf("unknown tags = %d, want %d", unknown, tc.unknown)
			}
			if diff := cmp.Diff(tc.stops, stops); tc.stops != nil && diff != "" {
				t.Errorf("stop reasons mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
