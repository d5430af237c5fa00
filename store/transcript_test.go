package store

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

// Steps that drive a Transcript, for table tests.

type step func(*Transcript)

func up(u projector.Update) step { return func(t *Transcript) { t.Apply(u) } }

func text(s string) step {
	return up(projector.Update{Tag: projector.TagAgentMessageChunk, Text: s})
}

func textID(id, s string) step {
	return up(projector.Update{Tag: projector.TagAgentMessageChunk, MessageID: id, Text: s})
}

func thought(s string) step {
	return up(projector.Update{Tag: projector.TagAgentThoughtChunk, Text: s})
}

func userChunk(s string) step {
	return up(projector.Update{Tag: projector.TagUserMessageChunk, Text: s})
}

func toolCall(tu projector.ToolUpdate) step {
	return up(projector.Update{Tag: projector.TagToolCall, Tool: tu})
}

func toolUpdate(tu projector.ToolUpdate) step {
	return up(projector.Update{Tag: projector.TagToolCallUpdate, Tool: tu})
}

func plan(es ...projector.PlanEntry) step {
	return up(projector.Update{Tag: projector.TagPlan, Plan: es})
}

func commands(names ...string) step {
	var cs []projector.Command
	for _, n := range names {
		cs = append(cs, projector.Command{Name: n, Description: n + "!"})
	}
	return up(projector.Update{Tag: projector.TagAvailableCommands, Commands: cs})
}

func mode(id string) step { return up(projector.Update{Tag: projector.TagCurrentMode, ModeID: id}) }

func config(cs ...projector.ConfigOption) step {
	return up(projector.Update{Tag: projector.TagConfigOption, Config: cs})
}

func prompt(s string) step { return func(t *Transcript) { t.UserPrompt(s, time.Time{}) } }

func setMeta(m Meta) step { return func(t *Transcript) { t.SetMeta(m) } }

func asst(s string) Message { return Message{Role: RoleAssistant, Text: s} }
func user(s string) Message { return Message{Role: RoleUser, Text: s} }

func cmdList(names ...string) []projector.Command {
	var cs []projector.Command
	for _, n := range names {
		cs = append(cs, projector.Command{Name: n, Description: n + "!"})
	}
	return cs
}

// bodies returns the bodies of es and checks that Seq is each entry's
// position.
func bodies(t *testing.T, es []Entry) []Body {
	t.Helper()
	bs := make([]Body, len(es))
	for i, e := range es {
		if e.Seq != i {
			t.Errorf("entry %d has Seq %d", i, e.Seq)
		}
		bs[i] = e.Body
	}
	return bs
}

var (
	modes  = []Mode{{ID: "ask", Name: "Ask"}, {ID: "code", Name: "Code", Description: "writes code"}}
	models = []Model{{ID: "opus", Name: "Opus"}, {ID: "haiku", Name: "Haiku"}}
	pe1    = projector.PlanEntry{Content: "Read the code", Priority: "high", Status: "in_progress"}
	pe2    = projector.PlanEntry{Content: "Fix the bug", Priority: "medium", Status: "pending"}
)

func TestTranscriptRules(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  []Body
	}{
		{
			name:  "deltas append to one assistant message",
			steps: []step{text("Hel"), text("lo, "), text("world")},
			want:  []Body{asst("Hello, world")},
		},
		{
			name:  "snapshot chunks give the same text as deltas",
			steps: []step{text("The answer"), text("The answer is"), text("The answer is 42."), text("The answer is 42.")},
			want:  []Body{asst("The answer is 42.")},
		},
		{
			name:  "empty chunks add nothing",
			steps: []step{text(""), thought(""), userChunk("")},
			want:  []Body{},
		},
		{
			name: "chunk after a tool call starts a new assistant message",
			steps: []step{
				text("Let me check."),
				toolCall(projector.ToolUpdate{ID: "c1", Title: "ls", HasTitle: true, Kind: "execute", Status: projector.StatusPending}),
				text("Done."),
			},
			want: []Body{
				asst("Let me check."),
				ToolCall{ID: "c1", Title: "ls", Kind: "execute", Status: projector.StatusPending},
				asst("Done."),
			},
		},
		{
			name: "snapshot text across a tool call continues as the projector sees it",
			steps: []step{
				text("A"), text("A, B"),
				toolCall(projector.ToolUpdate{ID: "c1"}),
				text("A, B. C"),
			},
			want: []Body{asst("A, B"), ToolCall{ID: "c1"}, asst(". C")},
		},
		{
			name:  "thought then message then thought gives three entries",
			steps: []step{thought("Hmm, "), thought("let me see."), text("Here."), thought("More.")},
			want:  []Body{Thought{Text: "Hmm, let me see."}, asst("Here."), Thought{Text: "More."}},
		},
		{
			name: "a message chunk marked as a thought is a thought",
			steps: []step{
				thought("a"),
				up(projector.Update{Tag: projector.TagAgentMessageChunk, Thought: true, Text: "b"}),
				text("c"),
			},
			want: []Body{Thought{Text: "ab"}, asst("c")},
		},
		{
			name:  "a new message id starts a new message",
			steps: []step{textID("m1", "First."), textID("m1", " Still first."), textID("m2", "Second.")},
			want:  []Body{asst("First. Still first."), asst("Second.")},
		},
		{
			name:  "user chunks append only to a last user message",
			steps: []step{userChunk("fix "), userChunk("it"), text("ok"), userChunk("again")},
			want:  []Body{user("fix it"), asst("ok"), user("again")},
		},
		{
			name: "history of snapshot turns: each user message starts afresh",
			steps: []step{
				userChunk("Yes please"), text("Done, all of it."),
				userChunk("Yes"), text("Done"),
			},
			want: []Body{user("Yes please"), asst("Done, all of it."), user("Yes"), asst("Done")},
		},
		{
			name:  "user prompt is a user message and starts a turn",
			steps: []step{text("Done, all"), prompt("And now?"), text("Done")},
			want:  []Body{asst("Done, all"), user("And now?"), asst("Done")},
		},
		{
			name:  "a prompt after a prompt is a new entry",
			steps: []step{prompt("one"), prompt("two")},
			want:  []Body{user("one"), user("two")},
		},
		{
			name: "tool_call re-sent for the same id upserts",
			steps: []step{
				toolCall(projector.ToolUpdate{ID: "c1", Title: "Terminal", HasTitle: true, Kind: "execute", Status: projector.StatusPending, RawInput: []byte(`{}`)}),
				text("running"),
				toolCall(projector.ToolUpdate{ID: "c1", Title: "Run go test", HasTitle: true, Kind: "execute", Status: projector.StatusPending, RawInput: []byte(`{"command":"go test"}`)}),
			},
			want: []Body{
				ToolCall{ID: "c1", Title: "Run go test", Kind: "execute", Status: projector.StatusPending, Input: []byte(`{"command":"go test"}`)},
				asst("running"),
			},
		},
		{
			name: "tool_call_update merges only the fields present",
			steps: []step{
				toolCall(projector.ToolUpdate{ID: "c1", Title: "Read a.go", HasTitle: true, Kind: "read", Status: projector.StatusPending,
					RawInput: []byte(`{"path":"a.go"}`), Locations: []projector.Location{{Path: "a.go", Line: 3}}}),
				toolUpdate(projector.ToolUpdate{ID: "c1", Status: projector.StatusInProgress}),
				toolUpdate(projector.ToolUpdate{ID: "c1", Status: projector.StatusCompleted, RawOutput: []byte(`"package a"`),
					HasContent: true, Content: []projector.ToolContent{{Type: "content", Text: "package a"}}}),
			},
			want: []Body{ToolCall{
				ID: "c1", Title: "Read a.go", Kind: "read", Status: projector.StatusCompleted,
				Input: []byte(`{"path":"a.go"}`), Output: []byte(`"package a"`),
				Content:   []projector.ToolContent{{Type: "content", Text: "package a"}},
				Locations: []projector.Location{{Path: "a.go", Line: 3}},
			}},
		},
		{
			name: "status moves forward only",
			steps: []step{
				toolCall(projector.ToolUpdate{ID: "c1", Status: projector.StatusInProgress}),
				toolUpdate(projector.ToolUpdate{ID: "c1", Status: projector.StatusPending}),
				toolUpdate(projector.ToolUpdate{ID: "c1", Status: projector.StatusFailed}),
				toolUpdate(projector.ToolUpdate{ID: "c1", Status: projector.StatusCompleted}),
				toolUpdate(projector.ToolUpdate{ID: "c1", Status: projector.StatusInProgress}),
			},
			want: []Body{ToolCall{ID: "c1", Status: projector.StatusFailed}},
		},
		{
			name: "tool_call_update for an unknown id creates the entry",
			steps: []step{
				text("a"),
				toolUpdate(projector.ToolUpdate{ID: "late", Title: "Edit x", HasTitle: true, Status: projector.StatusCompleted}),
			},
			want: []Body{asst("a"), ToolCall{ID: "late", Title: "Edit x", Status: projector.StatusCompleted}},
		},
		{
			name:  "a tool update without an id is ignored",
			steps: []step{toolUpdate(projector.ToolUpdate{Title: "x", HasTitle: true})},
			want:  []Body{},
		},
		{
			name:  "plan history is kept",
			steps: []step{plan(pe1, pe2), text("working"), plan(pe1, pe2), plan()},
			want:  []Body{Plan{Entries: []projector.PlanEntry{pe1, pe2}}, asst("working"), Plan{Entries: []projector.PlanEntry{pe1, pe2}}, Plan{}},
		},
		{
			name: "available_commands_update changes the last meta entry in place",
			steps: []step{
				setMeta(Meta{Modes: modes, CurrentMode: "ask"}),
				setMeta(Meta{Models: models, CurrentModel: "opus"}),
				text("hi"),
				commands("init", "review"),
				commands("init", "review"),
			},
			want: []Body{
				Meta{Modes: modes, CurrentMode: "ask"},
				Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "opus", Commands: cmdList("init", "review")},
				asst("hi"),
			},
		},
		{
			name:  "available_commands_update without a meta entry adds one",
			steps: []step{text("hi"), commands("init"), commands("init", "x")},
			want:  []Body{asst("hi"), Meta{Commands: cmdList("init", "x")}},
		},
		{
			name: "every capability change is a new meta entry",
			steps: []step{
				setMeta(Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "opus"}),
				commands("init"),
				config(projector.ConfigOption{ID: "effort", Name: "Effort", Value: "high"}),
				setMeta(Meta{CurrentModel: "haiku"}),
				setMeta(Meta{Commands: []projector.Command{}}),
			},
			want: []Body{
				Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "opus", Commands: cmdList("init")},
				Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "opus", Commands: cmdList("init"),
					Config: []projector.ConfigOption{{ID: "effort", Name: "Effort", Value: "high"}}},
				Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "haiku", Commands: cmdList("init"),
					Config: []projector.ConfigOption{{ID: "effort", Name: "Effort", Value: "high"}}},
				Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "haiku",
					Config: []projector.ConfigOption{{ID: "effort", Name: "Effort", Value: "high"}}},
			},
		},
		{
			name: "current_mode_update adds a mode_change from the mode known before",
			steps: []step{
				setMeta(Meta{Modes: modes, CurrentMode: "ask"}),
				mode("code"),
				mode("code"),
				mode("ask"),
				setMeta(Meta{Models: models}),
			},
			want: []Body{
				Meta{Modes: modes, CurrentMode: "ask"},
				ModeChange{Previous: "ask", New: "code"},
				ModeChange{Previous: "code", New: "ask"},
				Meta{Modes: modes, CurrentMode: "ask", Models: models},
			},
		},
		{
			name:  "mode change with no mode known",
			steps: []step{mode("plan")},
			want:  []Body{ModeChange{New: "plan"}},
		},
		{
			name: "usage, session info and unknown updates add nothing",
			steps: []step{
				up(projector.Update{Tag: projector.TagUsage, Usage: projector.UsageUpdate{Used: 1, UsedKnown: true}}),
				up(projector.Update{Tag: projector.TagSessionInfo, Title: "t", TitleSet: true}),
				up(projector.Update{Tag: projector.TagUnknown, RawTag: "future_update", Summary: "x"}),
			},
			want: []Body{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTranscript()
			for _, s := range tc.steps {
				s(tr)
			}
			got := bodies(t, tr.Entries())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if tr.Len() != len(got) {
				t.Errorf("Len = %d, want %d", tr.Len(), len(got))
			}
		})
	}
}

func TestTranscriptPermissions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := NewTranscript()
		opts := []PromptOption{{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "deny", Name: "Deny", Kind: "reject_once"}}
		// The request often arrives before its tool call.
		tr.Permission(PermissionEntry{RequestID: "r1", ToolCallID: "c1", Title: "Run rm", Options: opts})
		asked := time.Now().UTC()
		tr.Apply(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: "c1", Status: projector.StatusPending}})
		time.Sleep(2 * time.Second)
		answered := time.Now().UTC()
		if !tr.PermissionAnswered("r1", "allow", answered) {
			t.Error("first PermissionAnswered = false, want true")
		}
		if tr.PermissionAnswered("r1", "deny", answered.Add(time.Second)) {
			t.Error("second PermissionAnswered = true, want false (first answer wins)")
		}
		if tr.PermissionAnswered("r9", "allow", answered) {
			t.Error("PermissionAnswered of an unknown request = true")
		}
		want := []Entry{
			{Seq: 0, Time: asked, Updated: answered, Body: PermissionEntry{
				RequestID: "r1", ToolCallID: "c1", Title: "Run rm", Options: opts, Chosen: "allow",
				Asked: asked, Answered: answered,
			}},
			{Seq: 1, Time: asked, Updated: asked, Body: ToolCall{ID: "c1", Status: projector.StatusPending}},
		}
		if diff := cmp.Diff(want, tr.Entries()); diff != "" {
			t.Errorf("entries (-want +got):\n%s", diff)
		}
	})
}

// TestTranscriptTimes checks Time (created) and Updated under a fake clock.
func TestTranscriptTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now().UTC()
		at := func(d time.Duration) time.Time { return start.Add(d) }
		tr := NewTranscript()
		tr.UserPrompt("hi", at(-time.Minute))
		tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "a"})
		time.Sleep(time.Second)
		tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "b"})
		tr.Apply(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: "c", Status: projector.StatusPending}})
		time.Sleep(time.Second)
		tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: "c", Status: projector.StatusCompleted}})
		time.Sleep(time.Second)
		// A repeated snapshot changes nothing, not even Updated.
		tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: "c", Status: projector.StatusCompleted}})
		got := tr.Entries()
		type times struct{ Time, Updated time.Time }
		want := []times{
			{at(-time.Minute), at(-time.Minute)},
			{at(0), at(time.Second)},
			{at(time.Second), at(2 * time.Second)},
		}
		var gotTimes []times
		for _, e := range got {
			gotTimes = append(gotTimes, times{e.Time, e.Updated})
		}
		if diff := cmp.Diff(want, gotTimes); diff != "" {
			t.Errorf("times (-want +got):\n%s", diff)
		}
	})
}

// TestTranscriptDeltasEqualSnapshots feeds the same turn as deltas and as
// cumulative snapshots: the entries must be the same.
func TestTranscriptDeltasEqualSnapshots(t *testing.T) {
	parts := [][]string{
		{"Let me ", "look at ", "the code."},
		{"Found it: ", "a typo. "},
		{"Fixed", "."},
	}
	build := func(snapshots bool) []Body {
		tr := NewTranscript()
		tr.UserPrompt("fix it", time.Time{})
		var sofar strings.Builder
		for i, ps := range parts {
			if i > 0 {
				id := projector.ToolCallID("c" + string(rune('0'+i)))
				tr.Apply(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: id, Status: projector.StatusPending}})
				tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: id, Status: projector.StatusCompleted}})
			}
			for j, p := range ps {
				sofar.WriteString(p)
				chunk := p
				if snapshots {
					chunk = sofar.String()
				}
				tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: chunk})
				if snapshots && j == len(ps)-1 {
					// Agents repeat their last snapshot. (A repeat of
					// the very first chunk cannot be told from a short
					// delta repeated; see projector.Accumulator.)
					tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: chunk})
				}
			}
		}
		return bodies(t, tr.Entries())
	}
	deltas, snaps := build(false), build(true)
	if diff := cmp.Diff(deltas, snaps); diff != "" {
		t.Errorf("snapshot entries differ from delta entries (-deltas +snapshots):\n%s", diff)
	}
	if got, want := len(deltas), 6; got != want {
		t.Errorf("entries = %d, want %d: %v", got, want, deltas)
	}
}

func TestTranscriptDirty(t *testing.T) {
	tr := NewTranscript()
	seqs := func() []int {
		var s []int
		for _, e := range tr.Dirty() {
			s = append(s, e.Seq)
		}
		return s
	}
	steps := []struct {
		name string
		do   func()
		want []int
	}{
		{"new entries are dirty", func() {
			tr.SetMeta(Meta{Modes: modes})
			tr.UserPrompt("go", time.Time{})
			tr.Apply(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: "c1", Status: projector.StatusPending}})
			tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "a"})
		}, []int{0, 1, 2, 3}},
		{"nothing after MarkClean", tr.MarkClean, nil},
		{"a chunk appended to the last entry", func() {
			tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "b"})
		}, []int{3}},
		{"an old tool and the meta changed in place", func() {
			tr.MarkClean()
			tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: "c1", Status: projector.StatusCompleted}})
			tr.Apply(projector.Update{Tag: projector.TagAvailableCommands, Commands: cmdList("init")})
		}, []int{0, 2}},
		{"repeats change nothing", func() {
			tr.MarkClean()
			tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: "c1", Status: projector.StatusCompleted}})
			tr.Apply(projector.Update{Tag: projector.TagAvailableCommands, Commands: cmdList("init")})
			tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: ""})
		}, nil},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, seqs()); diff != "" {
			t.Errorf("%s: dirty seqs (-want +got):\n%s", s.name, diff)
		}
	}
	if got := tr.Entries()[3].Body; got != (Message{Role: RoleAssistant, Text: "ab"}) {
		t.Errorf("last entry = %#v, want assistant \"ab\"", got)
	}
}

// TestTranscriptEntriesAreSnapshots checks that entries handed out do not
// change when the transcript goes on.
func TestTranscriptEntriesAreSnapshots(t *testing.T) {
	tr := NewTranscript()
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "a"})
	tr.Apply(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: "c", RawInput: []byte(`{"a":1}`)}})
	before := tr.Entries()
	raw := []byte(`{"b":2}`)
	tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: "c", RawInput: raw}})
	raw[2] = 'X' // the caller reuses its buffer
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "b"})
	if got := string(before[1].Body.(ToolCall).Input); got != `{"a":1}` {
		t.Errorf("earlier snapshot's input = %s, want {\"a\":1}", got)
	}
	if got := string(tr.Entries()[1].Body.(ToolCall).Input); got != `{"b":2}` {
		t.Errorf("input = %s, want {\"b\":2} (copied from the update)", got)
	}
	if got := before[0].Body.(Message).Text; got != "a" {
		t.Errorf("earlier snapshot's text = %q, want %q", got, "a")
	}
}

// A 20 MiB chunk (and a 20 MiB prompt) is not stored whole: an entry
// keeps its first MaxEntryText bytes, cut at a character boundary, and
// the whole length; text that comes later, also after a restart, is
// counted.
func TestHugeTextIsCut(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	// "é" is two bytes and MaxEntryText is even: an odd start puts the
	// cut in the middle of a character.
	huge := "x" + strings.Repeat("é", 10<<20)
	tr := NewTranscript()
	tr.UserPrompt(huge, time.Time{})
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: huge})
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "tail"})
	if err := s.SaveEntries(ctx, "s1", tr.Dirty()); err != nil {
		t.Fatal(err)
	}
	tr.MarkClean()
	var stored int
	if err := s.db.QueryRowContext(ctx, `SELECT SUM(length(data)) FROM entries WHERE session_id = 's1'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored > 2*MaxEntryText+1024 {
		t.Errorf("the transcript takes %d bytes in the database; want about 2 × %d", stored, MaxEntryText)
	}
	check := func(when string, want []Message) {
		t.Helper()
		es, err := s.Entries(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != len(want) {
			t.Fatalf("%s: %d entries, want %d", when, len(es), len(want))
		}
		for i, e := range es {
			m, ok := e.Body.(Message)
			if !ok {
				t.Fatalf("%s: entry %d is %T", when, i, e.Body)
			}
			if m.Role != want[i].Role || m.Length != want[i].Length || len(m.Text) > MaxEntryText ||
				!utf8.ValidString(m.Text) || !strings.HasPrefix(huge, m.Text) || len(m.Text) < MaxEntryText-1 {
				t.Errorf("%s: entry %d = %s message of %d bytes (valid UTF-8 %v), length %d; want the start of the text (%d bytes at most), length %d",
					when, i, m.Role, len(m.Text), utf8.ValidString(m.Text), m.Length, MaxEntryText, want[i].Length)
			}
		}
	}
	check("saved", []Message{{Role: RoleUser, Length: len(huge)}, {Role: RoleAssistant, Length: len(huge) + 4}})

	// After a restart the reply goes on: its length keeps counting.
	tr, err := s.LoadTranscript(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "more"})
	if err := s.SaveEntries(ctx, "s1", tr.Dirty()); err != nil {
		t.Fatal(err)
	}
	check("resumed", []Message{{Role: RoleUser, Length: len(huge)}, {Role: RoleAssistant, Length: len(huge) + 8}})
}

// Text under the limit is whole, with no length recorded.
func TestTextUnderTheLimitIsWhole(t *testing.T) {
	tr := NewTranscript()
	whole := strings.Repeat("a", MaxEntryText)
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: whole})
	es := tr.Entries()
	if m := es[0].Body.(Message); m.Text != whole || m.Length != 0 {
		t.Errorf("message of %d bytes, length %d; want all %d bytes, length 0", len(m.Text), m.Length, len(whole))
	}
}
