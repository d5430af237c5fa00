package dispatch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
)

func cutTool(id, text, cut string) projector.Tool {
	return projector.Tool{ID: projector.ToolCallID(id), Text: text, CutOff: cut}
}

// opensOf renders what OnOpen was told, one report a line.
func opensOf(reports [][]dispatch.Open) string {
	var b strings.Builder
	for _, r := range reports {
		var ms []string
		for _, o := range r {
			var ls []string
			for _, l := range o.Lines {
				ls = append(ls, l.Key+"="+l.Text)
			}
			ms = append(ms, fmt.Sprintf("%s@%s card=%v [%s]", o.Key, o.ID, o.Card, strings.Join(ls, " / ")))
		}
		b.WriteString("{" + strings.Join(ms, "; ") + "}\n")
	}
	return b.String()
}

// The lane reports the tool lines it showed that still show a tool
// running, with their cut-off lines, once per delivered state: a state
// replaced before it was delivered costs nothing, a terminal line and the
// turn's end take the message off.
func TestLaneReportsOpenToolLines(t *testing.T) {
	var reports [][]dispatch.Open
	rec := channeltest.New(channeltest.Options{Edit: true})
	h := &harness{t: t, rec: rec, now: time.Unix(0, 0)}
	h.lane = dispatch.NewLane(dispatch.Options{
		Adapter: rec.Adapter(), Thread: rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never,
		OnOpen: func(o []dispatch.Open) { reports = append(reports, o) },
	})
	h.lane.BeginTurn(h.now)
	h.push(cutTool("a", "a running", "a cut"), cutTool("b", "b running", "b cut"))
	// Three states of a within one edit interval: one edit, one report.
	h.push(cutTool("a", "a 1", "a cut 1"))
	h.push(cutTool("a", "a 2", "a cut 2"))
	h.push(cutTool("a", "a 3", "a cut 3"))
	h.wait(2 * time.Second)
	h.push(cutTool("b", "b done", ""))
	h.wait(2 * time.Second)
	h.push(cutTool("c", "c running", "c cut"))
	h.wait(2 * time.Second)
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := strings.Join([]string{
		"{tool:a@m1 card=false [a=a cut]; tool:b@m2 card=false [b=b cut]}",
		"{tool:a@m1 card=false [a=a cut 3]; tool:b@m2 card=false [b=b cut]}",
		"{tool:a@m1 card=false [a=a cut 3]}",
		"{tool:a@m1 card=false [a=a cut 3]; tool:c@m3 card=false [c=c cut]}",
		"{}",
	}, "\n") + "\n"
	if got := opensOf(reports); got != want {
		t.Errorf("reports:\n%s\nwant\n%s", got, want)
	}
}

// A card is open while one of its rows runs; its cut-off text is its rows,
// a finished one as it is and a running one cut off.
func TestLaneReportsOpenCards(t *testing.T) {
	var reports [][]dispatch.Open
	rec := channeltest.New(channeltest.Options{Edit: true, Prompt: true})
	a := rec.Adapter()
	h := &harness{t: t, rec: rec, now: time.Unix(0, 0)}
	h.lane = dispatch.NewLane(dispatch.Options{
		Adapter: carder{Adapter: a, Editor: a.(channels.Editor), Prompter: a.(channels.Prompter), on: true},
		Thread:  rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never,
		OnOpen: func(o []dispatch.Open) { reports = append(reports, o) },
	})
	h.lane.BeginTurn(h.now)
	h.push(cutTool("c1", "a…", "a ✗"), cutTool("c2", "b…", "b ✗"))
	h.wait(2 * time.Second)
	h.push(cutTool("c1", "a ✓", ""))
	h.wait(2 * time.Second)
	h.push(cutTool("c2", "b ✓", ""))
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	want := strings.Join([]string{
		"{card:1@m1 card=true [c1=a ✗ / c2=b ✗]}",
		"{card:1@m1 card=true [c1=a ✓ / c2=b ✗]}",
		"{}",
	}, "\n") + "\n"
	if got := opensOf(reports); got != want {
		t.Errorf("reports:\n%s\nwant\n%s", got, want)
	}
}

// Where the adapter cannot edit, nothing is open: a cut-off line could
// not be shown in the same message anyway.
func TestLaneReportsNothingWithoutEdits(t *testing.T) {
	var reports [][]dispatch.Open
	rec := channeltest.New(channeltest.Options{})
	h := &harness{t: t, rec: rec, now: time.Unix(0, 0)}
	h.lane = dispatch.NewLane(dispatch.Options{
		Adapter: rec.Adapter(), Thread: rec.Thread("t"), Stream: projector.DefaultSettings(), Typing: never,
		OnOpen: func(o []dispatch.Open) { reports = append(reports, o) },
	})
	h.lane.BeginTurn(h.now)
	h.push(cutTool("a", "a running", "a cut"))
	h.push(projector.TurnEnd{StopReason: "end_turn"})
	h.drain()
	if len(reports) != 0 {
		t.Errorf("reports without edits:\n%s", opensOf(reports))
	}
}
