package store

import (
	"testing"
	"time"

	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fullTranscript builds a transcript with every entry type and field.
func fullTranscript(tr *Transcript) {
	tr.SetMeta(Meta{Modes: modes, CurrentMode: "ask", Models: models, CurrentModel: "opus"})
	tr.Apply(projector.Update{Tag: projector.TagAvailableCommands, Commands: cmdList("init", "review")})
	tr.UserPrompt("Fix <the> build & push", time.UnixMilli(1_700_000_000_123))
	tr.Apply(projector.Update{Tag: projector.TagAgentThoughtChunk, Text: "Thinking…"})
	tr.Apply(projector.Update{Tag: projector.TagPlan, Plan: []projector.PlanEntry{pe1, pe2}})
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "Let me look."})
	tr.Permission(PermissionEntry{RequestID: "r1", ToolCallID: "c1", Title: "Edit main.go",
		Options: []PromptOption{{ID: "allow", Name: "Allow", Kind: "allow_once"}}})
	tr.Apply(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{
		ID: "c1", Title: "Edit main.go", HasTitle: true, Kind: "edit", Status: projector.StatusPending,
		RawInput:  []byte(`{"path":"main.go","old":"a<b","new":"a>b"}`),
		Locations: []projector.Location{{Path: "main.go", Line: 7}, {Path: "x.go"}},
	}})
	tr.PermissionAnswered("r1", "allow", time.UnixMilli(1_700_000_001_000))
	tr.Question(QuestionEntry{RequestID: "q1", Message: "Which color?", Mode: "form", Fields: []string{"color"}, Asked: time.UnixMilli(1_700_000_001_500)})
	tr.QuestionAnswered("q1", "accept", []byte(`{"color":"green"}`), time.UnixMilli(1_700_000_002_000))
	tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{
		ID: "c1", Status: projector.StatusCompleted, RawOutput: []byte(`{"ok":true}`),
		HasContent: true, Content: []projector.ToolContent{
			{Type: "diff", Path: "main.go", OldText: "a<b", NewText: "a>b"},
			{Type: "terminal", TerminalID: "t1"},
			{Type: "content", Text: "done"},
		},
	}})
	tr.Apply(projector.Update{Tag: projector.TagCurrentMode, ModeID: "code"})
	tr.Apply(projector.Update{Tag: projector.TagConfigOption, Config: []projector.ConfigOption{{ID: "effort", Name: "Effort", Value: "high"}}})
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "Fixed "})
}

// more continues a conversation; it is applied both to a live transcript
// and to one loaded from the store.
func more(tr *Transcript) {
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "it."})                                                        // appends to the last message
	tr.Apply(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: "c1", Title: "Edited", HasTitle: true}}) // in place
	tr.Apply(projector.Update{Tag: projector.TagAvailableCommands, Commands: cmdList("init")})                                          // latest meta in place
	tr.Apply(projector.Update{Tag: projector.TagCurrentMode, ModeID: "ask"})                                                            // previous: code
	tr.PermissionAnswered("r1", "deny", time.UnixMilli(1))                                                                              // already answered
	if tr.QuestionAnswered("q1", "decline", nil, time.UnixMilli(1)) {
		panic("a settled question answered again")
	}
	tr.UserPrompt("thanks", time.UnixMilli(1_700_000_009_000))
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "You're welcome."})
}

func TestSaveLoadTranscript(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	live := NewTranscript()
	fullTranscript(live)
	if err := s.SaveEntries(ctx, "sess", live.Dirty()); err != nil {
		t.Fatal(err)
	}
	live.MarkClean()

	saved, err := s.Entries(ctx, "sess")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Entries(), saved); diff != "" {
		t.Fatalf("saved entries (-live +saved):\n%s", diff)
	}
	if n := len(saved); n != 11 {
		t.Errorf("saved %d entries, want 11", n)
	}
	if other, err := s.Entries(ctx, "other"); err != nil || len(other) != 0 {
		t.Errorf("Entries(other) = %v, %v; want none", other, err)
	}

	loaded, err := s.LoadTranscript(ctx, "sess")
	if err != nil {
		t.Fatal(err)
	}
	if d := loaded.Dirty(); len(d) != 0 {
		t.Errorf("loaded transcript has %d dirty entries, want 0", len(d))
	}

	// Both go on the same way; times of new changes differ.
	more(live)
	more(loaded)
	ignoreTimes := cmpopts.IgnoreFields(Entry{}, "Time", "Updated")
	if diff := cmp.Diff(live.Entries(), loaded.Entries(), ignoreTimes); diff != "" {
		t.Errorf("loaded transcript went on differently (-live +loaded):\n%s", diff)
	}
	if diff := cmp.Diff(live.Dirty(), loaded.Dirty(), ignoreTimes); diff != "" {
		t.Errorf("dirty entries differ (-live +loaded):\n%s", diff)
	}
	wantTail := []Body{
		asst("Fixed it."),
		ModeChange{Previous: "code", New: "ask"},
		user("thanks"),
		asst("You're welcome."),
	}
	all := loaded.Entries()
	if diff := cmp.Diff(wantTail, bodies(t, all)[len(all)-4:]); diff != "" {
		t.Errorf("last entries (-want +got):\n%s", diff)
	}

	// Saving only the dirty entries brings the store up to date.
	if err := s.SaveEntries(ctx, "sess", loaded.Dirty()); err != nil {
		t.Fatal(err)
	}
	loaded.MarkClean()
	saved, err = s.Entries(ctx, "sess")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(loaded.Entries(), saved); diff != "" {
		t.Errorf("entries after the second save (-memory +saved):\n%s", diff)
	}
}

func TestLoadTranscriptEmpty(t *testing.T) {
	s := openTest(t)
	tr, err := s.LoadTranscript(t.Context(), "none")
	if err != nil {
		t.Fatal(err)
	}
	tr.Apply(projector.Update{Tag: projector.TagAgentMessageChunk, Text: "x"})
	if diff := cmp.Diff([]Body{asst("x")}, bodies(t, tr.Entries())); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestLoadTranscriptErrors(t *testing.T) {
	tests := []struct {
		name string
		rows [][]any // seq, type, data
	}{
		{"missing entry", [][]any{{0, "thought", `{"text":"a"}`}, {2, "thought", `{"text":"b"}`}}},
		{"unknown type", [][]any{{0, "hologram", `{}`}}},
		{"bad JSON", [][]any{{0, "message", `{"role":`}}},
		{"bad role", [][]any{{0, "message", `{"role":"robot","text":"x"}`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			for _, r := range tc.rows {
				_, err := s.db.ExecContext(t.Context(),
					`INSERT INTO entries (session_id, seq, type, created_ms, updated_ms, data) VALUES ('s', ?, ?, 1, 1, ?)`, r...)
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.LoadTranscript(t.Context(), "s"); err == nil {
				t.Error("LoadTranscript: no error")
			}
		})
	}
}

func TestSaveEntriesIsAtomic(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	good := Entry{Seq: 0, Body: Thought{Text: "a"}}
	if err := s.SaveEntries(ctx, "s", []Entry{good, {Seq: 1}}); err == nil {
		t.Fatal("SaveEntries with a nil body: no error")
	}
	if es, err := s.Entries(ctx, "s"); err != nil || len(es) != 0 {
		t.Errorf("Entries after a failed save = %v, %v; want none", es, err)
	}
	if err := s.SaveEntries(ctx, "s", nil); err != nil {
		t.Errorf("SaveEntries(nil) = %v", err)
	}
}

func TestSaveEntriesKeepsOddRawJSON(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	tc := ToolCall{ID: "c", Input: []byte(`not json`), Output: []byte(`{"a": [1, 2]}`)}
	if err := s.SaveEntries(ctx, "s", []Entry{{Seq: 0, Body: tc}}); err != nil {
		t.Fatal(err)
	}
	es, err := s.Entries(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	got := es[0].Body.(ToolCall)
	if string(got.Input) != `"not json"` || string(got.Output) != `{"a":[1,2]}` {
		t.Errorf("Input, Output = %s, %s; want \"not json\" as a JSON string and the output compacted", got.Input, got.Output)
	}
}
