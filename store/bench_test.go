package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/projector"
)

// BenchmarkSaveEntries measures appending a transcript to the store in
// batches of 100 entries, one transaction each.
func BenchmarkSaveEntries(b *testing.B) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const batch = 100
	text := strings.Repeat("Some reply text, ", 12)
	at := time.UnixMilli(1_700_000_000_000).UTC()
	es := make([]Entry, batch)
	seq := 0
	for b.Loop() {
		for i := range es {
			var body Body = Message{Role: RoleAssistant, Text: text}
			if i%3 == 1 {
				body = ToolCall{ID: fmt.Sprint("c", seq), Title: "Run go test", Kind: "execute",
					Status: projector.StatusCompleted, Input: []byte(`{"command":"go test ./..."}`), Output: []byte(`{"exit":0}`)}
			}
			es[i] = Entry{Seq: seq, Time: at, Updated: at, Body: body}
			seq++
		}
		if err := s.SaveEntries(b.Context(), "bench", es); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(seq), "ns/entry")
}

// benchTurn is a noisy synthetic turn: many tiny chunks, tool calls with
// repeated updates, thoughts, a plan and usage updates.
func benchTurn() []projector.Update {
	var us []projector.Update
	add := func(u projector.Update) { us = append(us, u) }
	for seg := range 5 {
		for i := range 40 {
			add(projector.Update{Tag: projector.TagAgentThoughtChunk, Text: fmt.Sprint("thinking ", i, " ")})
		}
		for i := range 200 {
			add(projector.Update{Tag: projector.TagAgentMessageChunk, Text: fmt.Sprint("word", i, " ")})
		}
		id := projector.ToolCallID(fmt.Sprint("call_", seg))
		add(projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: id, Title: "Terminal", HasTitle: true,
			Kind: "execute", Status: projector.StatusPending, RawInput: []byte(`{}`)}})
		for range 3 {
			add(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: id, Title: "Run make", HasTitle: true,
				Status: projector.StatusInProgress, RawInput: []byte(`{"command":"make"}`)}})
		}
		add(projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: id, Status: projector.StatusCompleted,
			RawOutput: []byte(`{"exit":0}`), HasContent: true, Content: []projector.ToolContent{{Type: "content", Text: "ok"}}}})
		add(projector.Update{Tag: projector.TagPlan, Plan: []projector.PlanEntry{pe1, pe2}})
		for range 5 {
			add(projector.Update{Tag: projector.TagUsage, Usage: projector.UsageUpdate{Used: 100, UsedKnown: true}})
		}
	}
	return us
}

// BenchmarkTranscriptApply measures building a transcript: one turn per
// iteration; ns/update is the number to compare.
func BenchmarkTranscriptApply(b *testing.B) {
	us := benchTurn()
	n := 0
	for b.Loop() {
		tr := NewTranscript()
		tr.UserPrompt("build it", time.Time{})
		for _, u := range us {
			tr.Apply(u)
		}
		if len(tr.Dirty()) == 0 {
			b.Fatal("no entries")
		}
		n += len(us)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/update")
}
