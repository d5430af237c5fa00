package projector

import (
	"fmt"
	"strings"
	"testing"
)

func announce(id, title, state string) *Update {
	u := &Update{Tag: TagSubagent, RawTag: "subagent_update", SessionID: "s1"}
	u.Subagent = SubagentUpdate{ID: id, Title: title, TitleSet: title != "", State: state, StateSet: state != "", Cancel: true, CapsSet: true}
	return u
}

// of marks u as child's.
func of(child string, u *Update) *Update {
	u.SessionID, u.Child = child, child
	return u
}

// cards are the card outputs of outs, by key, in order.
func cards(outs []Output) []Tool {
	var out []Tool
	for _, o := range outs {
		if t, ok := o.(Tool); ok && strings.HasPrefix(string(t.ID), SubagentPrefix) {
			out = append(out, t)
		}
	}
	return out
}

// TestSubagentCard: a child is a card edited in place (one key) with its
// state, tool count and latest tool line; its text and tool calls are
// not the turn's text or tool lines; what its card holds is its details.
func TestSubagentCard(t *testing.T) {
	p := New(DefaultSettings())
	out := runOn(p, "end_turn",
		msg("Delegating."),
		announce("c1", "Review", "running"),
		&Update{Tag: TagSessionMessageChunk, RawTag: "session_message_chunk", SessionID: "s1", Sender: "s1", Recipient: "c1", Text: "Look at main.go"},
		of("c1", toolCall("r1", "Read main.go", "read", "in_progress", "")),
		of("c1", msg("child words")),
		of("c1", toolUpd("r1", "", "completed", "")),
		announce("c1", "", "requires_action"),
		announce("c1", "", "idle"),
		msg(" Done."),
	)
	if got := textOf(out); got != "Delegating. Done." {
		t.Errorf("text %q, want only the parent's", got)
	}
	cs := cards(out)
	if n := count(out, isTool); n != len(cs) {
		t.Errorf("%d tool outputs, %d of them cards: the child's tool became a line of the turn", n, len(cs))
	}
	var states []string
	for i, c := range cs {
		if c.ID != "subagent:1:c1" || c.First != (i == 0) {
			t.Errorf("card %d: %+v", i, c)
		}
		states = append(states, c.Text)
	}
	want := []string{
		"🤖 Subagent `Review` · running",
		"🤖 Subagent `Review` · running\n1 tool · latest: 📖 Read main.go · running",
		"🤖 Subagent `Review` · running\n1 tool · latest: 📖 Read main.go · done",
		"🤖 Subagent `Review` · needs you\n1 tool · latest: 📖 Read main.go · done",
		"🤖 Subagent `Review` · idle\n1 tool · latest: 📖 Read main.go · done",
	}
	if strings.Join(states, "|") != strings.Join(want, "|") {
		t.Errorf("card states\n got %q\nwant %q", states, want)
	}
	if cs[0].CutOff != "🤖 Subagent `Review` · unknown" {
		t.Errorf("a running card cut off reads %q", cs[0].CutOff)
	}
}

// TestSubagentDetail: the details of a card: the task given, the tool
// lines and the child's text.
func TestSubagentDetail(t *testing.T) {
	p := New(DefaultSettings())
	p.BeginTurn(nil)
	for _, u := range []*Update{
		announce("c1", "", "running"),
		{Tag: TagSessionMessage, RawTag: "session_message", Recipient: "c1", Text: "Look at main.go"},
		of("c1", toolCall("r1", "Read main.go", "read", "completed", "")),
		of("c1", msg("It is fine.")),
		of("c1", &Update{Tag: TagAgentThoughtChunk, RawTag: "agent_thought_chunk", Text: "secret thought"}),
	} {
		p.Apply(u, nil)
	}
	in, out, ok := p.SubagentDetail("c1")
	if !ok || in != "Look at main.go" || out != "📖 Read main.go · done\n\nIt is fine." {
		t.Errorf("detail = %q, %q, %v", in, out, ok)
	}
	if p.SubagentName("c1") != "`Look at main.go`" {
		t.Errorf("a child without title is named %q, want its task", p.SubagentName("c1"))
	}
	if _, _, ok := p.SubagentDetail("nobody"); ok {
		t.Error("details of a child never announced")
	}
}

// TestSubagentLeavesSessionState: a child's usage, mode, config,
// commands, title and plan change nothing of the session's and show
// nothing.
func TestSubagentLeavesSessionState(t *testing.T) {
	p := New(settings(func(s *Settings) {
		s.MetaMode = MetaVerbose
		s.ShowUsage = true
		s.TagVisibility = map[string]bool{"plan": true, "session_info_update": true}
	}))
	p.SetModes("code", nil)
	out := runOn(p, "end_turn",
		announce("c1", "Kid", "running"),
		of("c1", usage(5, 10, true)),
		of("c1", &Update{Tag: TagCurrentMode, RawTag: "current_mode_update", ModeID: "plan"}),
		of("c1", &Update{Tag: TagAvailableCommands, RawTag: "available_commands_update", Commands: []Command{{Name: "x"}}}),
		of("c1", &Update{Tag: TagSessionInfo, RawTag: "session_info_update", Title: "child title", TitleSet: true}),
		of("c1", &Update{Tag: TagConfigOption, RawTag: "config_option_update", Config: []ConfigOption{{ID: "model", Value: "big"}}}),
		of("c1", &Update{Tag: TagPlan, RawTag: "plan", Plan: []PlanEntry{{Content: "step"}}}),
	)
	if p.Mode() != "code" || p.Title() != "" || p.Commands() != nil || p.LastUsage().UsedKnown {
		t.Errorf("session state changed: mode %q title %q commands %v usage %+v", p.Mode(), p.Title(), p.Commands(), p.LastUsage())
	}
	if n := len(cards(out)); n != 1 || count(out, isStatus) != 0 || count(out, func(o Output) bool { _, ok := o.(Plan); return ok }) != 0 {
		t.Errorf("outputs %v, want the card alone", brief(out))
	}
}

// TestSubagentCardWithoutEdits: where the channel cannot edit, a card is
// posted again only when the child's state changes, each post costing
// the meta cap one; the cap holds.
func TestSubagentCardWithoutEdits(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MaxMetaEventsPerTurn = 3 }))
	p.SetCanEdit(false)
	ups := []*Update{announce("c1", "Kid", "running")}
	for i := range 20 {
		ups = append(ups, of("c1", toolCall(fmt.Sprint("t", i), "Read f", "read", "completed", "")))
	}
	ups = append(ups, announce("c1", "", "requires_action"), announce("c1", "", "running"), announce("c1", "", "idle"))
	out := runOn(p, "end_turn", ups...)
	var got []string
	for _, c := range cards(out) {
		first, _, _ := strings.Cut(c.Text, "\n")
		got = append(got, first)
	}
	want := "🤖 Subagent `Kid` · running|🤖 Subagent `Kid` · needs you|🤖 Subagent `Kid` · running"
	if strings.Join(got, "|") != want {
		t.Errorf("cards posted %q, want %q (the cap of 3 refusing the fourth)", got, want)
	}
	if count(out, func(o Output) bool { n, ok := o.(Notice); return ok && n.Reason == NoticeMetaCap }) != 1 {
		t.Errorf("no meta cap notice: %v", brief(out))
	}
}

// TestSubagentBounds: a session keeps at most maxKids children, and a
// child at most maxKidTools tool calls (later ones counted) and
// maxKidText bytes of text.
func TestSubagentBounds(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MaxMetaEventsPerTurn = 1000 }))
	p.BeginTurn(nil)
	for i := range maxKids + 5 {
		p.Apply(announce(fmt.Sprint("c", i), "", "running"), nil)
	}
	if len(p.kids) != maxKids {
		t.Errorf("%d children kept, want %d", len(p.kids), maxKids)
	}
	if out := p.Apply(of("c70", msg("x")), nil); len(out) != 0 || p.TurnText() != "" {
		t.Errorf("a child past the bound showed %v / text %q", out, p.TurnText())
	}
	for i := range maxKidTools + 10 {
		p.Apply(of("c0", toolCall(fmt.Sprint("t", i), "Read f", "read", "completed", "")), nil)
	}
	p.Apply(of("c0", msg(strings.Repeat("y", 2*maxKidText))), nil)
	c := p.turn.cards["c0"]
	if len(c.order) != maxKidTools || c.uncount != 10 || c.kept.Len() != maxKidText {
		t.Errorf("kept %d tools (+%d counted) and %d bytes", len(c.order), c.uncount, c.kept.Len())
	}
	if out := cards(p.Apply(of("c0", toolCall("more", "Read f", "read", "completed", "")), nil)); len(out) != 1 || !strings.Contains(out[0].Text, fmt.Sprint(maxKidTools+11, " tools")) {
		t.Errorf("card after the bound: %v", out)
	}
}

// TestSubagentCardsAtAStop: a stopped turn's cards of children still at
// work read unknown (edited); an idle child's card stays as it is.
func TestSubagentCardsAtAStop(t *testing.T) {
	p := New(DefaultSettings())
	out := runOn(p, "cancelled", announce("c1", "Busy", "running"), announce("c2", "Done", "idle"))
	cs := cards(out)
	if len(cs) != 3 || cs[2].ID != "subagent:1:c1" || cs[2].Text != "🤖 Subagent `Busy` · unknown" {
		t.Errorf("cards %+v, want c1's edited to unknown last", cs)
	}
	if out := cards(runOn(p, "end_turn", announce("c1", "", "running"))); len(out) != 1 {
		t.Errorf("a turn ending normally edited cards: %+v", out)
	}
}
