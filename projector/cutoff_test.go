package projector

import (
	"strings"
	"testing"
)

// A running tool's line carries the line its end would show if the turn
// were cut off (the same line EndTurn emits for it), a terminal one none.
func TestToolLineCarriesItsCutOffLine(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MetaMode = MetaVerbose }))
	out := p.BeginTurn(nil)
	out = p.Apply(toolCall("r", "make", "execute", "in_progress", `{"command":"make"}`), out)
	out = p.Apply(toolUpd("r", "make all", "", ""), out)
	out = p.Apply(toolCall("d", "ls", "execute", "completed", `{"command":"ls"}`), out)
	out = p.EndTurn("cancelled", "", out)
	var tools []Tool
	for _, o := range out {
		if tl, ok := o.(Tool); ok {
			tools = append(tools, tl)
		}
	}
	if len(tools) != 4 {
		t.Fatalf("tool lines = %+v, want 4", tools)
	}
	running, renamed, done, cancelled := tools[0], tools[1], tools[2], tools[3]
	if running.CutOff != "🛠️ make · cancelled" {
		t.Errorf("cut-off line of the running tool = %q", running.CutOff)
	}
	if renamed.CutOff != cancelled.Text || !strings.Contains(renamed.CutOff, "make all") {
		t.Errorf("cut-off line after its input changed = %q, the turn's end shows %q", renamed.CutOff, cancelled.Text)
	}
	if done.CutOff != "" || cancelled.CutOff != "" {
		t.Errorf("terminal lines carry a cut-off line: %q, %q", done.CutOff, cancelled.CutOff)
	}
}

// The cut-off line is cut to acp.stream.maxToolSummaryChars as the line is,
// keeping its status.
func TestCutOffLineKeepsItsStatusWhenCut(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MaxToolSummaryChars = 30 }))
	out := p.BeginTurn(nil)
	out = p.Apply(toolCall("r", "make", "execute", "in_progress", `{"command":"make `+strings.Repeat("x", 80)+`"}`), out)
	tl := out[len(out)-1].(Tool)
	if !strings.HasSuffix(tl.CutOff, " · cancelled") || len([]rune(tl.CutOff)) > 30 {
		t.Errorf("cut-off line = %q, want at most 30 characters ending in the status", tl.CutOff)
	}
}
