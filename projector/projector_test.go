package projector

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Builders for updates.

func msg(text string) *Update {
	return &Update{Tag: TagAgentMessageChunk, RawTag: "agent_message_chunk", Text: text}
}

func thought(text string) *Update {
	return &Update{Tag: TagAgentThoughtChunk, RawTag: "agent_thought_chunk", Text: text}
}

func toolCall(id, title, kind, status string, input string) *Update {
	u := &Update{Tag: TagToolCall, RawTag: "tool_call"}
	u.Tool = ToolUpdate{ID: ToolCallID(id), Title: title, HasTitle: title != "", Kind: kind, Status: ParseToolStatus(status)}
	if input != "" {
		u.Tool.RawInput = []byte(input)
	}
	return u
}

func toolUpd(id, title, status, input string) *Update {
	u := toolCall(id, title, "", status, input)
	u.Tag, u.RawTag = TagToolCallUpdate, "tool_call_update"
	return u
}

func usage(used, size int64, usedKnown bool) *Update {
	return &Update{Tag: TagUsage, RawTag: "usage_update", Usage: UsageUpdate{Used: used, Size: size, UsedKnown: usedKnown, SizeKnown: true}}
}

func unknown(tag, summary string) *Update {
	return &Update{Tag: TagUnknown, RawTag: tag, Summary: summary}
}

// run projects one turn of updates and returns the outputs, TurnEnd included.
func run(s Settings, ups ...*Update) []Output {
	p := New(s)
	return runOn(p, "end_turn", ups...)
}

func runOn(p *Projector, stop string, ups ...*Update) []Output {
	out := p.BeginTurn(nil)
	for _, u := range ups {
		out = p.Apply(u, out)
	}
	return p.EndTurn(stop, "", out)
}

func settings(f func(*Settings)) Settings {
	s := DefaultSettings()
	if f != nil {
		f(&s)
	}
	return s
}

// brief renders outputs as short strings for comparison.
func brief(outs []Output) []string {
	var r []string
	for _, o := range outs {
		switch o := o.(type) {
		case Text:
			r = append(r, "text:"+o.Text)
		case Thought:
			r = append(r, "thought:"+o.Text)
		case Tool:
			r = append(r, fmt.Sprintf("tool:%s:%s", o.ID, o.Text))
		case Status:
			r = append(r, "status:"+o.Text)
		case Notice:
			r = append(r, "notice:"+o.Text)
		case Plan:
			r = append(r, "plan:"+o.Text)
		case TurnEnd:
			r = append(r, "end:"+o.StopReason+o.Err)
		}
	}
	return r
}

func count(outs []Output, pred func(Output) bool) int {
	n := 0
	for _, o := range outs {
		if pred(o) {
			n++
		}
	}
	return n
}

func isTool(o Output) bool   { _, ok := o.(Tool); return ok }
func isStatus(o Output) bool { _, ok := o.(Status); return ok }
func isNotice(o Output) bool { _, ok := o.(Notice); return ok }

func textOf(outs []Output) string {
	var b strings.Builder
	for _, o := range outs {
		if t, ok := o.(Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// stormTool is one noisy tool as real agents send it: a bare start with a
// generic title, repeated identical progress, a late title and input, then
// a terminal status.
func stormTool(id, cmd, final string) []*Update {
	ups := []*Update{toolCall(id, "Terminal", "execute", "pending", "{}")}
	for range 6 {
		ups = append(ups, toolUpd(id, "", "in_progress", ""))
	}
	ups = append(ups, toolUpd(id, cmd, "", ""), toolUpd(id, "", "", `{"command":"`+cmd+`"}`), toolUpd(id, "", final, ""))
	return ups
}

func TestTagGatingDefaults(t *testing.T) {
	outs := run(DefaultSettings(),
		&Update{Tag: TagAvailableCommands, RawTag: "available_commands_update", Commands: []Command{{Name: "review"}}},
		thought("thinking hard"),
		usage(10, 100, true),
		&Update{Tag: TagPlan, RawTag: "plan", Plan: []PlanEntry{{Content: "step", Status: "pending"}}},
		&Update{Tag: TagCurrentMode, RawTag: "current_mode_update", ModeID: "plan"},
		&Update{Tag: TagSessionInfo, RawTag: "session_info_update", Title: "T", TitleSet: true},
		&Update{Tag: TagConfigOption, RawTag: "config_option_update", Config: []ConfigOption{{ID: "mode", Value: "plan"}}},
		&Update{Tag: TagUserMessageChunk, RawTag: "user_message_chunk", Text: "hi"},
		msg("Answer."),
	)
	if got, want := brief(outs), []string{"text:Answer.", "end:end_turn"}; !cmp.Equal(got, want) {
		t.Errorf("outputs (-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestHiddenUpdatesStillUpdateState(t *testing.T) {
	s := settings(func(s *Settings) { s.TagVisibility = map[string]bool{"tool_call": false} })
	p := New(s)
	outs := runOn(p, "end_turn",
		toolCall("c1", "git status", "execute", "pending", `{"command":"git status"}`),
		toolUpd("c1", "", "completed", ""),
	)
	// The hidden tool_call still merged: the terminal line has its title.
	if got, want := brief(outs), []string{"tool:c1:🛠️ git status · done", "end:end_turn"}; !cmp.Equal(got, want) {
		t.Errorf("outputs (-got +want):\n%s", cmp.Diff(got, want))
	}
	p2 := New(DefaultSettings())
	runOn(p2, "end_turn", usage(42, 100, true), &Update{Tag: TagAvailableCommands, Commands: []Command{{Name: "x"}}})
	if u := p2.LastUsage(); u.Used != 42 {
		t.Errorf("hidden usage not recorded: %+v", u)
	}
	if c := p2.Commands(); len(c) != 1 {
		t.Errorf("commands = %v, want 1", c)
	}
}

func TestUnknownTagsOnlyInVerbose(t *testing.T) {
	ups := []*Update{unknown("widget_update", "Context window 80% full"), unknown("subagent_update", "Explore"), msg("ok")}
	for _, mode := range []string{MetaOff, MetaMinimal} {
		outs := run(settings(func(s *Settings) { s.MetaMode = mode }), ups...)
		if n := count(outs, isStatus); n != 0 {
			t.Errorf("%s: %d status lines for unknown tags, want 0", mode, n)
		}
	}
	outs := run(settings(func(s *Settings) { s.MetaMode = MetaVerbose }), ups...)
	want := []string{"status:⚙️ widget_update: Context window 80% full", "status:⚙️ subagent_update: Explore", "text:ok", "end:end_turn"}
	if got := brief(outs); !cmp.Equal(got, want) {
		t.Errorf("verbose (-got +want):\n%s", cmp.Diff(got, want))
	}
	outs = run(settings(func(s *Settings) {
		s.MetaMode = MetaVerbose
		s.TagVisibility = map[string]bool{"widget_update": false}
	}), ups...)
	if n := count(outs, isStatus); n != 1 {
		t.Errorf("verbose with widget_update off: %d status lines, want 1", n)
	}
}

func TestUnknownTagNeverRenamesOrEchoes(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MetaMode = MetaVerbose }))
	u := unknown("notice", "Switched to plan mode")
	u.Title = "Switched to plan mode" // a structural decoder would have filled this
	c := unknown("compaction_summary_chunk", "")
	c.Text = "Summary of earlier conversation"
	outs := runOn(p, "end_turn", u, c, msg("A"))
	if p.Title() != "" {
		t.Errorf("title = %q after a notice, want none", p.Title())
	}
	if got := textOf(outs); got != "A" {
		t.Errorf("reply text = %q, want %q", got, "A")
	}
}

func TestMetaModes(t *testing.T) {
	var ups []*Update
	ups = append(ups, msg("Running."))
	ups = append(ups, stormTool("c1", "go vet ./...", "completed")...)
	ups = append(ups, msg(" Done."))
	tests := []struct {
		mode string
		want []string
	}{
		{MetaOff, []string{"text:Running.", "text: Done.", "end:end_turn"}},
		{MetaMinimal, []string{"text:Running.", "tool:c1:🛠️ Terminal · running", "tool:c1:🛠️ go vet ./... · running", "tool:c1:🛠️ go vet ./... · done", "text: Done.", "end:end_turn"}},
		{MetaVerbose, []string{
			"text:Running.",
			"tool:c1:🛠️ Terminal · pending",
			"tool:c1:🛠️ Terminal · running",
			"tool:c1:🛠️ go vet ./... · running",
			"tool:c1:🛠️ go vet ./... · done",
			"text: Done.", "end:end_turn",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			outs := run(settings(func(s *Settings) { s.MetaMode = tc.mode }), ups...)
			if got := brief(outs); !cmp.Equal(got, tc.want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, tc.want))
			}
		})
	}
}

func TestMinimalDefersBareStart(t *testing.T) {
	// Real claude-agent-acp: a bare pending "Terminal", then title and input
	// (still pending), then completed. The start line waits for the input.
	outs := run(DefaultSettings(),
		msg("Checking."),
		toolCall("t1", "Terminal", "execute", "pending", "{}"),
		toolUpd("t1", "echo hi", "", `{"command":"echo hi"}`),
		toolUpd("t1", "", "completed", ""),
		msg("Next."),
		toolCall("t2", "Read File", "read", "pending", "{}"),
		msg("Text after a bare tool comes after its line."),
	)
	want := []string{
		"text:Checking.",
		"tool:t1:🛠️ echo hi · pending",
		"tool:t1:🛠️ echo hi · done",
		"text:Next.",
		"tool:t2:📖 Read File · pending",
		"text:Text after a bare tool comes after its line.",
		"tool:t2:📖 Read File · cancelled",
		"end:end_turn",
	}
	if got := brief(outs); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestToolMerge(t *testing.T) {
	t.Run("upsert and status forward only", func(t *testing.T) {
		outs := run(settings(func(s *Settings) { s.MetaMode = MetaVerbose }),
			toolCall("c", "ls", "execute", "pending", `{"command":"ls"}`),
			toolCall("c", "ls", "execute", "pending", `{"command":"ls"}`), // re-sent
			toolUpd("c", "", "completed", ""),
			toolUpd("c", "", "in_progress", ""), // backwards: ignored
			toolCall("c", "ls", "execute", "pending", `{"command":"ls"}`),
		)
		want := []string{"tool:c:🛠️ ls · pending", "tool:c:🛠️ ls · done", "end:end_turn"}
		if got := brief(outs); !cmp.Equal(got, want) {
			t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
		}
	})
	t.Run("never a raw id as label", func(t *testing.T) {
		outs := run(DefaultSettings(), toolCall("call_0123456789abcdef", "", "", "in_progress", ""), toolUpd("call_0123456789abcdef", "", "failed", ""))
		for _, o := range outs {
			if tl, ok := o.(Tool); ok {
				if strings.Contains(tl.Text, "call_0123") {
					t.Errorf("line %q shows the raw call id", tl.Text)
				}
				if !strings.Contains(tl.Text, "tool call") {
					t.Errorf("line %q lacks the fallback label", tl.Text)
				}
			}
		}
	})
}

func TestMinimalOneStartOneTerminal(t *testing.T) {
	var ups []*Update
	for i := range 12 {
		final := "completed"
		if i%4 == 3 {
			final = "failed"
		}
		ups = append(ups, stormTool(fmt.Sprintf("call_%02d", i), fmt.Sprintf("step %d", i), final)...)
	}
	// Where the channel edits, the placeholder start line ("Terminal ·
	// running") is edited once into the real title; where it cannot,
	// nothing is posted between the start and the terminal line.
	for _, tc := range []struct {
		canEdit bool
		want    int
	}{{true, 3}, {false, 2}} {
		p := New(DefaultSettings())
		p.SetCanEdit(tc.canEdit)
		outs := runOn(p, "end_turn", ups...)
		perTool := map[ToolCallID]int{}
		firsts := map[ToolCallID]int{}
		for _, o := range outs {
			if tl, ok := o.(Tool); ok {
				perTool[tl.ID]++
				if tl.First {
					firsts[tl.ID]++
				}
			}
		}
		if len(perTool) != 12 {
			t.Fatalf("canEdit %v: %d tools shown, want 12", tc.canEdit, len(perTool))
		}
		for id, n := range perTool {
			if n != tc.want || firsts[id] != 1 {
				t.Errorf("canEdit %v: %s: %d lines (%d first), want %d, one first", tc.canEdit, id, n, firsts[id], tc.want)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	ups := []*Update{usage(100, 1000, true), usage(100, 1000, true), usage(0, 1000, false), usage(200, 1000, true), usage(200, 1000, true)}
	outs := run(DefaultSettings(), ups...)
	if n := count(outs, isStatus); n != 0 {
		t.Errorf("showUsage false: %d usage lines", n)
	}
	p := New(settings(func(s *Settings) { s.ShowUsage = true }))
	outs = runOn(p, "end_turn", ups...)
	want := []string{"status:⚙️ context: 100 / 1,000 tokens (10%)", "status:⚙️ context: 200 / 1,000 tokens (20%)", "end:end_turn"}
	if got := brief(outs); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	for _, o := range outs {
		if s, ok := o.(Status); ok && strings.Contains(s.Text, " 0 /") {
			t.Errorf("used null rendered as 0: %q", s.Text)
		}
	}
	// used: null first of all never renders.
	outs = run(settings(func(s *Settings) { s.ShowUsage = true }), usage(0, 1000, false))
	if n := count(outs, isStatus); n != 0 {
		t.Errorf("a null used rendered: %v", brief(outs))
	}
	// Recorded per turn either way, with cost.
	p = New(DefaultSettings())
	p.BeginTurn(nil)
	c := usage(5, 10, true)
	c.Usage.Cost, c.Usage.Currency, c.Usage.CostKnown = 0.25, "USD", true
	p.Apply(c, nil)
	p.Apply(usage(0, 10, false), nil)
	got, frames := p.TurnUsage()
	if frames != 2 || got.Used != 5 || !got.CostKnown || got.Cost != 0.25 {
		t.Errorf("turn usage = %+v over %d frames, want used 5, cost 0.25, 2 frames", got, frames)
	}
}

func TestMaxTurnChars(t *testing.T) {
	for _, mode := range []string{MetaOff, MetaMinimal, MetaVerbose} {
		t.Run(mode, func(t *testing.T) {
			s := settings(func(s *Settings) {
				s.MetaMode = mode
				s.MaxTurnChars = 10
				s.MaxMetaEventsPerTurn = 1
			})
			outs := run(s,
				toolCall("a", "x", "execute", "in_progress", `{"command":"x"}`),
				toolCall("b", "y", "execute", "in_progress", `{"command":"y"}`), // past the meta cap
				msg("héllo wörld"), msg(" and more"), msg(" and more"))
			if got := textOf(outs); got != "héllo wörl" {
				t.Errorf("text = %q, want %q", got, "héllo wörl")
			}
			n, at := 0, -1
			for i, o := range outs {
				if nt, ok := o.(Notice); ok && nt.Reason == NoticeTruncated {
					n++
					at = i
					if !strings.HasPrefix(nt.Text, "⚙️ ") {
						t.Errorf("notice %q not prefixed", nt.Text)
					}
				}
			}
			if n != 1 {
				t.Fatalf("%d truncation notices, want 1", n)
			}
			if _, ok := outs[at-1].(Text); !ok {
				t.Errorf("truncation notice does not follow the text it cuts: %v", brief(outs))
			}
		})
	}
	t.Run("grapheme not split", func(t *testing.T) {
		outs := run(settings(func(s *Settings) { s.MaxTurnChars = 3 }), msg("ab👩‍💻cd"))
		if got := textOf(outs); got != "ab" {
			t.Errorf("text = %q, want %q", got, "ab")
		}
	})
}

func TestLineCuts(t *testing.T) {
	long := strings.Repeat("x", 500)
	s := settings(func(s *Settings) {
		s.MetaMode = MetaVerbose
		s.MaxToolSummaryChars = 40
		s.MaxStatusChars = 30
	})
	outs := run(s, toolCall("c", "run "+long, "execute", "in_progress", ""), unknown("notice", long))
	for _, o := range outs {
		var text string
		var max int
		switch o := o.(type) {
		case Tool:
			text, max = o.Text, 40
		case Status:
			text, max = o.Text, 30
		default:
			continue
		}
		if n := utf8.RuneCountInString(text); n > max || !strings.Contains(text, "…") {
			t.Errorf("line %q: %d runes, want <= %d with …", text, n, max)
		}
		if _, ok := o.(Tool); ok && !strings.HasSuffix(text, "· running") && !strings.HasSuffix(text, "· cancelled") {
			t.Errorf("tool line %q lost its status to the cut", text)
		}
	}
	// Dedupe compares the uncut text: two statuses that differ only past
	// the cut are both shown.
	outs = run(s, unknown("notice", long+"1"), unknown("notice", long+"2"))
	if n := count(outs, isStatus); n != 2 {
		t.Errorf("%d statuses, want 2 (uncut texts differ)", n)
	}
}

func TestMetaCap(t *testing.T) {
	s := settings(func(s *Settings) { s.MaxMetaEventsPerTurn = 2 })
	var ups []*Update
	ups = append(ups, toolCall("a", "first", "execute", "in_progress", `{"command":"first"}`))
	ups = append(ups, toolCall("b", "second", "execute", "in_progress", `{"command":"second"}`))
	ups = append(ups, toolCall("c", "third", "execute", "in_progress", `{"command":"third"}`))
	ups = append(ups, msg("still here"))
	ups = append(ups, toolUpd("a", "", "completed", ""), toolUpd("b", "", "failed", ""), toolUpd("c", "", "completed", ""))
	outs := run(s, ups...)
	want := []string{
		"tool:a:🛠️ first · running",
		"tool:b:🛠️ second · running",
		"notice:⚙️ More tool and status activity in this turn is not shown (acp.stream.maxMetaEventsPerTurn: 2).",
		"text:still here",
		"tool:a:🛠️ first · done",
		"tool:b:🛠️ second · failed",
		"end:end_turn",
	}
	if got := brief(outs); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
}

// TestMetaCapWithoutEdits: where the channel cannot edit, every tool state
// is a new message; the cap counts those messages, and a tool whose start
// line was shown always gets its terminal line, because the start reserved
// room for it.
func TestMetaCapWithoutEdits(t *testing.T) {
	three := func() []*Update {
		var ups []*Update
		for _, id := range []string{"a", "b", "c"} {
			ups = append(ups, toolCall(id, "run "+id, "execute", "in_progress", `{"command":"run `+id+`"}`))
			ups = append(ups, toolUpd(id, "", "completed", ""))
		}
		return append(ups, msg("done"))
	}
	posted := func(outs []Output) int { return count(outs, isTool) + count(outs, isStatus) }
	for _, tc := range []struct {
		name    string
		mode    string
		cap     int
		canEdit bool
		want    []string
	}{
		{"cannot edit, cap 3", MetaMinimal, 3, false, []string{
			"tool:a:🛠️ run a · running",
			"tool:a:🛠️ run a · done",
			"notice:⚙️ More tool and status activity in this turn is not shown (acp.stream.maxMetaEventsPerTurn: 3).",
			"text:done",
			"end:end_turn",
		}},
		{"cannot edit, cap 4", MetaMinimal, 4, false, []string{
			"tool:a:🛠️ run a · running",
			"tool:a:🛠️ run a · done",
			"tool:b:🛠️ run b · running",
			"tool:b:🛠️ run b · done",
			"notice:⚙️ More tool and status activity in this turn is not shown (acp.stream.maxMetaEventsPerTurn: 4).",
			"text:done",
			"end:end_turn",
		}},
		{"can edit, cap 3: terminal states are edits", MetaMinimal, 3, true, []string{
			"tool:a:🛠️ run a · running",
			"tool:a:🛠️ run a · done",
			"tool:b:🛠️ run b · running",
			"tool:b:🛠️ run b · done",
			"tool:c:🛠️ run c · running",
			"tool:c:🛠️ run c · done",
			"text:done",
			"end:end_turn",
		}},
		{"can edit, cap 2", MetaMinimal, 2, true, []string{
			"tool:a:🛠️ run a · running",
			"tool:a:🛠️ run a · done",
			"tool:b:🛠️ run b · running",
			"tool:b:🛠️ run b · done",
			"notice:⚙️ More tool and status activity in this turn is not shown (acp.stream.maxMetaEventsPerTurn: 2).",
			"text:done",
			"end:end_turn",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(settings(func(s *Settings) { s.MetaMode = tc.mode; s.MaxMetaEventsPerTurn = tc.cap }))
			p.SetCanEdit(tc.canEdit)
			outs := runOn(p, "end_turn", three()...)
			if got := brief(outs); !cmp.Equal(got, tc.want) {
				t.Errorf("(-got +want):\n%s", cmp.Diff(got, tc.want))
			}
			if !tc.canEdit && posted(outs) > tc.cap {
				t.Errorf("%d meta messages posted, cap %d", posted(outs), tc.cap)
			}
		})
	}

	// Tools still running when the turn ends get their terminal line from
	// the reservation, even with the cap spent by later tools.
	t.Run("cannot edit, open tools at turn end", func(t *testing.T) {
		p := New(settings(func(s *Settings) { s.MaxMetaEventsPerTurn = 4 }))
		p.SetCanEdit(false)
		outs := runOn(p, "cancelled",
			toolCall("a", "run a", "execute", "in_progress", `{"command":"run a"}`),
			toolCall("b", "run b", "execute", "in_progress", `{"command":"run b"}`),
			toolCall("c", "run c", "execute", "in_progress", `{"command":"run c"}`))
		want := []string{
			"tool:a:🛠️ run a · running",
			"tool:b:🛠️ run b · running",
			"notice:⚙️ More tool and status activity in this turn is not shown (acp.stream.maxMetaEventsPerTurn: 4).",
			"tool:a:🛠️ run a · cancelled",
			"tool:b:🛠️ run b · cancelled",
			"notice:⚙️ Stopped.",
			"end:cancelled",
		}
		if got := brief(outs); !cmp.Equal(got, want) {
			t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
		}
	})

	// Verbose mode: intermediate states are new messages too, and never
	// eat the room reserved for a terminal line.
	t.Run("cannot edit, verbose", func(t *testing.T) {
		p := New(settings(func(s *Settings) { s.MetaMode = MetaVerbose; s.MaxMetaEventsPerTurn = 3 }))
		p.SetCanEdit(false)
		outs := runOn(p, "end_turn",
			toolCall("a", "run a", "execute", "pending", `{"command":"run a"}`),
			toolUpd("a", "", "in_progress", ""),
			toolUpd("a", "run a --long", "", ""),
			toolUpd("a", "", "completed", ""))
		if n := posted(outs); n > 3 {
			t.Errorf("%d meta messages posted, cap 3: %v", n, brief(outs))
		}
		if last := brief(outs); !slices.Contains(last, "tool:a:🛠️ run a --long · done") {
			t.Errorf("terminal line missing: %v", last)
		}
	})
}

func TestThoughts(t *testing.T) {
	marked := msg("secret plan")
	marked.Thought = true
	ups := []*Update{thought("hmm "), marked, msg("Answer")}
	outs := run(DefaultSettings(), ups...)
	if got, want := brief(outs), []string{"text:Answer", "end:end_turn"}; !cmp.Equal(got, want) {
		t.Errorf("hidden thoughts (-got +want):\n%s", cmp.Diff(got, want))
	}
	s := settings(func(s *Settings) { s.TagVisibility = map[string]bool{"agent_thought_chunk": true} })
	p := New(s)
	outs = runOn(p, "end_turn", ups...)
	want := []string{"thought:hmm ", "thought:secret plan", "text:Answer", "end:end_turn"}
	if got := brief(outs); !cmp.Equal(got, want) {
		t.Errorf("visible thoughts (-got +want):\n%s", cmp.Diff(got, want))
	}
}

func TestPlanModeTitle(t *testing.T) {
	s := settings(func(s *Settings) {
		s.TagVisibility = map[string]bool{"plan": true, "current_mode_update": true}
	})
	p := New(s)
	p.SetModes("default", map[string]string{"default": "Default", "plan": "Plan Mode"})
	plan := func(st ...string) *Update {
		u := &Update{Tag: TagPlan, RawTag: "plan"}
		for i, x := range st {
			u.Plan = append(u.Plan, PlanEntry{Content: fmt.Sprintf("step %d", i+1), Priority: "high", Status: x})
		}
		return u
	}
	outs := runOn(p, "end_turn",
		&Update{Tag: TagCurrentMode, RawTag: "current_mode_update", ModeID: "plan"},
		plan("pending", "pending"),
		plan("pending", "pending"), // identical: dropped
		plan("completed", "in_progress"),
		&Update{Tag: TagSessionInfo, RawTag: "session_info_update", Title: "Fix the test", TitleSet: true},
	)
	want := []string{
		"notice:⚙️ mode: Default → Plan Mode",
		"plan:📋 Plan\n⬜ step 1 · ‼️ high\n⬜ step 2 · ‼️ high",
		"plan:📋 Plan\n✅ step 1 · ‼️ high\n🔄 step 2 · ‼️ high",
		"end:end_turn",
	}
	if got := brief(outs); !cmp.Equal(got, want) {
		t.Errorf("(-got +want):\n%s", cmp.Diff(got, want))
	}
	if p.Title() != "Fix the test" {
		t.Errorf("title = %q", p.Title())
	}
	runOn(p, "end_turn", &Update{Tag: TagSessionInfo, RawTag: "session_info_update", TitleSet: true})
	if p.Title() != "" {
		t.Errorf("title = %q after title: null, want cleared", p.Title())
	}
}

func TestTurnResetAndOutsideTurn(t *testing.T) {
	p := New(DefaultSettings())
	// Outside a turn (session/load history, late updates): nothing shown.
	var out []Output
	out = p.Apply(msg("history"), out)
	out = p.Apply(toolCall("h", "old", "execute", "completed", `{"command":"old"}`), out)
	if len(out) != 0 {
		t.Errorf("outside a turn: %v", brief(out))
	}
	a := runOn(p, "end_turn", msg("OK"))
	b := runOn(p, "end_turn", msg("OK"))
	if textOf(a) != "OK" || textOf(b) != "OK" {
		t.Errorf("two turns: %q and %q, want OK twice", textOf(a), textOf(b))
	}
}

func TestEndFinalisesOpenTools(t *testing.T) {
	for _, tc := range []struct{ stop, err, notice string }{
		{"cancelled", "", "⚙️ Stopped."},
		{"", "agent crashed", "⚙️ The agent failed: agent crashed"},
	} {
		p := New(DefaultSettings())
		out := p.BeginTurn(nil)
		out = p.Apply(toolCall("r", "make", "execute", "in_progress", `{"command":"make"}`), out)
		out = p.Apply(toolCall("d", "ls", "execute", "completed", `{"command":"ls"}`), out)
		out = p.EndTurn(tc.stop, tc.err, out)
		want := []string{"tool:r:🛠️ make · running", "tool:d:🛠️ ls · done", "tool:r:🛠️ make · cancelled", "notice:" + tc.notice, "end:" + tc.stop + tc.err}
		if got := brief(out); !cmp.Equal(got, want) {
			t.Errorf("%s%s (-got +want):\n%s", tc.stop, tc.err, cmp.Diff(got, want))
		}
	}
}

func TestNoticesArePrefixedOnce(t *testing.T) {
	outs := run(settings(func(s *Settings) { s.MaxTurnChars = 1; s.MetaMode = MetaVerbose }), unknown("notice", "⚙️ already prefixed"), msg("abc"))
	for _, o := range outs {
		var s string
		switch o := o.(type) {
		case Notice:
			s = o.Text
		case Status:
			s = o.Text
		default:
			continue
		}
		if strings.Count(s, "⚙") != 1 && !strings.Contains(s, "notice") {
			t.Errorf("%q: prefix doubled", s)
		}
		if !strings.HasPrefix(s, "⚙️ ") {
			t.Errorf("%q: not prefixed", s)
		}
	}
	_ = isNotice
	_ = isTool
}

func TestSuppressedReasons(t *testing.T) {
	p := New(DefaultSettings())
	check := func(name string, u Update, want string) {
		t.Helper()
		out := p.Apply(&u, nil)
		if got := p.Suppressed(); got != want {
			t.Errorf("%s: Suppressed() = %q (outputs %v), want %q", name, got, out, want)
		}
	}
	check("commands outside a turn", Update{Tag: TagAvailableCommands}, SuppressedState)
	check("text outside a turn", Update{Tag: TagAgentMessageChunk, Text: "x"}, SuppressedOutsideTurn)
	p.BeginTurn(nil)
	check("text shown", Update{Tag: TagAgentMessageChunk, Text: "hello"}, "")
	check("empty chunk", Update{Tag: TagAgentMessageChunk, Text: ""}, SuppressedEmpty)
	check("hidden plan", Update{Tag: TagPlan, Plan: []PlanEntry{{Content: "a"}}}, SuppressedHidden)
	check("usage hidden", Update{Tag: TagUsage, Usage: UsageUpdate{Used: 1, Size: 2, UsedKnown: true, SizeKnown: true}}, SuppressedHidden)
	tool := Update{Tag: TagToolCall, Tool: ToolUpdate{ID: "c1", Title: "ls", HasTitle: true, Kind: "execute", Status: StatusInProgress, RawInput: []byte(`{"command":"ls"}`)}}
	check("tool start", tool, "")
	repeat := tool
	repeat.Tag = TagToolCallUpdate
	check("identical tool snapshot", repeat, SuppressedUnchanged)
	s := DefaultSettings()
	s.MaxTurnChars = 5
	p2 := New(s)
	p2.BeginTurn(nil)
	p2.Apply(&Update{Tag: TagAgentMessageChunk, Text: "0123456789"}, nil)
	p2.Apply(&Update{Tag: TagAgentMessageChunk, Text: "more"}, nil)
	if got := p2.Suppressed(); got != SuppressedBudget {
		t.Errorf("text past the budget: %q, want budget", got)
	}
}
