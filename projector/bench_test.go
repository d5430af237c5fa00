package projector_test

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/projector"
)

// turnUpdates decodes the session/updates of a recorded stream's turns.
func turnUpdates(tb testing.TB, name string) []projector.Update {
	tb.Helper()
	data, err := os.ReadFile("../replay/testdata/streams/" + name + ".ndjson")
	if err != nil {
		tb.Fatal(err)
	}
	var ups []projector.Update
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f acpwire.Frame
		if err := acpwire.Decode(sc.Bytes(), &f); err != nil {
			tb.Fatal(err)
		}
		if f.Method == "session/update" {
			ups = append(ups, f.Update)
		}
	}
	return ups
}

// BenchmarkProject measures the projector alone on recorded streams: one
// turn per iteration; events/s is the number to compare.
func BenchmarkProject(b *testing.B) {
	for _, name := range []string{"claude-agent-acp.long-markdown", "synthetic.tool-storm", "synthetic.usage-spam"} {
		b.Run(name, func(b *testing.B) {
			ups := turnUpdates(b, name)
			p := projector.New(projector.DefaultSettings())
			out := make([]projector.Output, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				out = p.BeginTurn(out[:0])
				for i := range ups {
					out = p.Apply(&ups[i], out[:0])
				}
				out = p.EndTurn("end_turn", "", out[:0])
			}
			b.ReportMetric(float64(b.N*len(ups))/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkSuppressed measures updates the projector drops: repeated usage
// and identical tool snapshots. They must not allocate.
func BenchmarkSuppressed(b *testing.B) {
	p, ups := suppressedSetup()
	out := make([]projector.Output, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		for i := range ups {
			out = p.Apply(&ups[i], out[:0])
		}
	}
	b.ReportMetric(float64(b.N*len(ups))/b.Elapsed().Seconds(), "events/s")
}

func suppressedSetup() (*projector.Projector, []projector.Update) {
	s := projector.DefaultSettings()
	s.ShowUsage = true
	p := projector.New(s)
	p.BeginTurn(nil)
	tool := projector.Update{Tag: projector.TagToolCallUpdate, RawTag: "tool_call_update",
		Tool: projector.ToolUpdate{ID: "call_1", Status: projector.StatusInProgress, HasContent: true,
			Content: []projector.ToolContent{{Type: "content", Text: "$ go test"}}}}
	start := projector.Update{Tag: projector.TagToolCall, RawTag: "tool_call",
		Tool: projector.ToolUpdate{ID: "call_1", Title: "go test", HasTitle: true, Kind: "execute", Status: projector.StatusInProgress, RawInput: []byte(`{"command":"go test"}`)}}
	usage := projector.Update{Tag: projector.TagUsage, RawTag: "usage_update", Usage: projector.UsageUpdate{Used: 5, Size: 10, UsedKnown: true, SizeKnown: true}}
	p.Apply(&start, nil)
	p.Apply(&usage, nil)
	return p, []projector.Update{tool, usage, tool, usage}
}

// TestSuppressedUpdatesDoNotAllocate: dropping a repeated usage_update or an
// identical tool_call_update snapshot costs no allocation.
func TestSuppressedUpdatesDoNotAllocate(t *testing.T) {
	p, ups := suppressedSetup()
	out := make([]projector.Output, 0, 16)
	allocs := testing.AllocsPerRun(1000, func() {
		for i := range ups {
			out = p.Apply(&ups[i], out[:0])
			if len(out) != 0 {
				t.Fatalf("update %d was not suppressed: %v", i, out)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per suppressed batch, want 0", allocs)
	}
}
