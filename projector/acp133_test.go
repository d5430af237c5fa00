package projector

import (
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/sysmsg"
	"github.com/google/go-cmp/cmp"
)

func noticeUpd(sev, title string) *Update {
	return &Update{Tag: TagNotice, RawTag: "notice", Notice: NoticeUpdate{Severity: sev, Title: title}}
}

func compactionUpd(id, status string) *Update {
	return &Update{Tag: TagCompaction, RawTag: "compaction_update", Compaction: CompactionUpdate{ID: id, Status: status}}
}

func chunkUpd(id, text string) *Update {
	return &Update{Tag: TagCompactionChunk, RawTag: "compaction_summary_chunk", Compaction: CompactionUpdate{ID: id, Chunk: text}}
}

func texts(out []Output) []string {
	var s []string
	for _, o := range out {
		switch o := o.(type) {
		case Notice:
			s = append(s, "notice: "+o.Text)
		case Tool:
			s = append(s, "tool "+string(o.ID)+": "+o.Text)
		case Plan:
			s = append(s, "plan: "+o.Text)
		case Text:
			s = append(s, "text: "+o.Text)
		}
	}
	return s
}

// Outside a turn at most NoticesPerMinute notices a minute are shown,
// then one line says the next are hidden; a minute later they show again.
func TestNoticesOutsideTurnPerMinute(t *testing.T) {
	p := New(DefaultSettings())
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var out []Output
	for i := range 6 {
		p.SetNow(t0.Add(time.Duration(i) * time.Second))
		out = p.Apply(noticeUpd("info", "n"), out)
	}
	hidden := sysmsg.Text(sysmsg.NoticesHidden{PerMinute: NoticesPerMinute})
	shown := sysmsg.Text(sysmsg.AgentNotice{Severity: "info", Title: "n"})
	want := []string{"notice: " + shown, "notice: " + shown, "notice: " + shown, "notice: " + hidden}
	if diff := cmp.Diff(want, texts(out)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	if p.Suppressed() != SuppressedBudget {
		t.Errorf("suppressed %q", p.Suppressed())
	}
	p.SetNow(t0.Add(61 * time.Second))
	if got := texts(p.Apply(noticeUpd("error", "again"), nil)); len(got) != 1 || !strings.Contains(got[0], "again") {
		t.Errorf("a minute later: %q", got)
	}
	// Hidden by tag.
	p = New(settings(func(s *Settings) { s.TagVisibility = map[string]bool{"notice": false} }))
	if out := p.Apply(noticeUpd("error", "x"), nil); len(out) != 0 {
		t.Errorf("hidden notice shown: %v", out)
	}
}

// In a turn the meta cap counts notices; they never become answer text.
func TestNoticesInTurnMetaCap(t *testing.T) {
	s := settings(func(s *Settings) { s.MaxMetaEventsPerTurn = 2 })
	out := run(s, noticeUpd("warning", "a"), msg("hi"), noticeUpd("error", "b"), noticeUpd("info", "c"), noticeUpd("info", "d"))
	got := texts(out)
	if len(got) != 4 || !strings.Contains(got[0], "Warning from the agent: `a`") || got[1] != "text: hi" || !strings.Contains(got[2], "Error from the agent: `b`") || !strings.Contains(got[3], "maxMetaEventsPerTurn") {
		t.Errorf("outputs %q", got)
	}
}

// A compaction is one line edited in place; summary and error follow patch
// semantics, chunks append while it is in progress; one left open at the
// turn's end reads cancelled.
func TestCompactionPatches(t *testing.T) {
	p := New(DefaultSettings())
	out := p.BeginTurn(nil)
	out = p.Apply(chunkUpd("c1", "ignored: not started"), out)
	out = p.Apply(compactionUpd("c1", "in_progress"), out)
	out = p.Apply(chunkUpd("c1", "A"), out)
	out = p.Apply(chunkUpd("c1", "B"), out)
	if s, _ := p.CompactionSummary("c1"); s != "AB" {
		t.Errorf("summary %q", s)
	}
	replace := compactionUpd("c1", "completed")
	replace.Compaction.Summary, replace.Compaction.SummarySet = []string{"Whole."}, true
	out = p.Apply(replace, out)
	out = p.Apply(chunkUpd("c1", "late"), out)
	if s, _ := p.CompactionSummary("c1"); s != "Whole." {
		t.Errorf("summary %q", s)
	}
	keep := compactionUpd("c1", "")
	out = p.Apply(keep, out)
	if s, _ := p.CompactionSummary("c1"); s != "Whole." {
		t.Errorf("an omitted summary changed it: %q", s)
	}
	clear := compactionUpd("c1", "")
	clear.Compaction.SummarySet = true
	out = p.Apply(clear, out)
	if s, ok := p.CompactionSummary("c1"); s != "" || !ok {
		t.Errorf("a cleared summary reads %q", s)
	}
	failed := compactionUpd("c2", "failed")
	failed.Compaction.Error, failed.Compaction.ErrorSet = "boom", true
	out = p.Apply(failed, out)
	out = p.Apply(compactionUpd("c3", "in_progress"), out)
	out = p.EndTurn("end_turn", "", out)
	want := []string{
		"tool compaction:c1: ⚙️ 🗜️ Compacting the context…",
		"tool compaction:c1: ⚙️ 🗜️ Context compacted.",
		"tool compaction:c2: ⚙️ 🗜️ Compacting the context failed: `boom`",
		"tool compaction:c3: ⚙️ 🗜️ Compacting the context…",
		"tool compaction:c3: ⚙️ 🗜️ Compacting the context was cancelled.",
	}
	if diff := cmp.Diff(want, texts(out)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, ok := p.CompactionSummary("c1"); ok {
		t.Error("a compaction outlived its turn")
	}
}

func planUpd(id string, doc PlanDoc, entries ...PlanEntry) *Update {
	return &Update{Tag: TagPlanUpdate, RawTag: "plan_update", PlanID: id, PlanDoc: doc, Plan: entries}
}

// Plans by id upsert and go; the legacy plan is one more; the plan
// operations follow the plan's visibility unless set.
func TestPlansByIDRender(t *testing.T) {
	s := settings(func(s *Settings) { s.TagVisibility = map[string]bool{"plan": true} })
	legacy := &Update{Tag: TagPlan, RawTag: "plan", Plan: []PlanEntry{{Content: "old", Status: "completed"}}}
	out := run(s,
		planUpd("a", PlanDoc{Type: "items"}, PlanEntry{Content: "one", Status: "in_progress", Priority: "high"}),
		planUpd("b", PlanDoc{Type: "markdown", Markdown: "# B\n- x"}),
		planUpd("c", PlanDoc{Type: "file", URI: "file:///w/PLAN`s.md"}),
		legacy,
		&Update{Tag: TagPlanRemoved, RawTag: "plan_removed", PlanID: "b"},
		&Update{Tag: TagPlanRemoved, RawTag: "plan_removed", PlanID: "a"},
		&Update{Tag: TagPlanRemoved, RawTag: "plan_removed", PlanID: "c"},
		&Update{Tag: TagPlan, RawTag: "plan"}, // an empty plan shows nothing, as before
	)
	want := []string{
		"plan: 📋 Plan\n🔄 one · ‼️ high",
		"plan: 📋 Plan 1 of 2\n🔄 one · ‼️ high\n\n📋 Plan 2 of 2\n# B\n- x",
		"plan: 📋 Plan 1 of 3\n🔄 one · ‼️ high\n\n📋 Plan 2 of 3\n# B\n- x\n\n📋 Plan 3 of 3 · ``/w/PLAN`s.md``",
		"plan: 📋 Plan 1 of 4\n✅ old\n\n📋 Plan 2 of 4\n🔄 one · ‼️ high\n\n📋 Plan 3 of 4\n# B\n- x\n\n📋 Plan 4 of 4 · ``/w/PLAN`s.md``",
		"plan: 📋 Plan 1 of 3\n✅ old\n\n📋 Plan 2 of 3\n🔄 one · ‼️ high\n\n📋 Plan 3 of 3 · ``/w/PLAN`s.md``",
		"plan: 📋 Plan 1 of 2\n✅ old\n\n📋 Plan 2 of 2 · ``/w/PLAN`s.md``",
		"plan: 📋 Plan\n✅ old",
	}
	if diff := cmp.Diff(want, texts(out)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	gone := run(s, planUpd("a", PlanDoc{Type: "items"}, PlanEntry{Content: "x"}), &Update{Tag: TagPlanRemoved, RawTag: "plan_removed", PlanID: "a"})
	if diff := cmp.Diff([]string{"plan: 📋 Plan\n⬜ x", "plan: " + planCleared}, texts(gone)); diff != "" {
		t.Errorf("the last plan removed (-want +got)\n%s", diff)
	}
	if out := run(DefaultSettings(), planUpd("a", PlanDoc{Type: "items"}, PlanEntry{Content: "x"})); len(texts(out)) != 0 {
		t.Errorf("plan_update shown while plan is hidden: %q", texts(out))
	}
	on := settings(func(s *Settings) { s.TagVisibility = map[string]bool{"plan_update": true} })
	if out := run(on, planUpd("a", PlanDoc{Type: "items"}, PlanEntry{Content: "x"})); len(texts(out)) != 1 {
		t.Errorf("plan_update set visible: %q", texts(out))
	}
}
