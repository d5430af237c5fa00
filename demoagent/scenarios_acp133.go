package demoagent

import (
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// Scenarios of ACP 1.33's updates the SDK cannot send (notice,
// compaction_update, compaction_summary_chunk, plan_update with a file or
// markdown plan, plan_removed): written raw through the wire.

// raw sends one session/update whose update object is u, unless the turn
// was cancelled.
func (t *turn) raw(u map[string]any) error {
	return t.a.wire.notify(t.ctx, acp.ClientMethodSessionUpdate, map[string]any{"sessionId": t.id, "update": u})
}

func notice(severity, title, description string) map[string]any {
	u := map[string]any{"sessionUpdate": "notice", "severity": severity, "title": title}
	if description != "" {
		u["description"] = description
	}
	return u
}

// floodNotices is how many notices notice flood sends after its turn.
const floodNotices = 10

// runNotice sends a notice of each severity (and one of a severity no
// client knows, whose title tries Markdown and a mention) with text
// between; "flood" also sends floodNotices notices once the turn's answer
// is on the wire, outside any turn.
func runNotice(t *turn, arg string) (acp.StopReason, error) {
	if arg != "" && arg != "flood" {
		return badArg(t, "notice", fmt.Errorf("unknown argument %q", arg))
	}
	err := t.script(
		"Connecting to the tools.",
		notice("info", "Connected to the demo MCP server", ""),
		notice("warning", "Context window 80% full", "Older messages may be compacted soon."),
		" Still working.",
		notice("error", "The lint server crashed", "Continuing without it."),
		notice("_demo_hint", "**Ping** @everyone <!channel>", ""),
		" Done: four notices, none of them part of this answer.",
	)
	if err != nil {
		return "", err
	}
	if arg == "flood" {
		// After the turn's answer is written: outside any turn.
		answered, _ := t.a.wire.watchFor(`"stopReason"`)
		bg := &turn{a: t.a, id: t.id, ctx: t.life, life: t.life, seq: t.seq}
		t.a.handlers.Go(func() {
			select {
			case <-answered:
			case <-bg.ctx.Done():
				return
			}
			for i := range floodNotices {
				if err := bg.raw(notice("info", fmt.Sprintf("Background notice %d", i+1), "")); err != nil {
					return
				}
			}
		})
	}
	return acp.StopReasonEndTurn, nil
}

// runCompact compacts the context once (compactionId c<seq>): in
// progress, summary chunks, then completed (the summary the chunks made),
// failed with an error, or cancelled.
func runCompact(t *turn, arg string) (acp.StopReason, error) {
	id := fmt.Sprintf("c%d", t.seq)
	end := map[string]any{"sessionUpdate": "compaction_update", "compactionId": id, "status": "completed"}
	switch arg {
	case "":
	case "fail":
		end["status"], end["error"] = "failed", "The summary did not fit the model's context."
	case "cancel":
		end["status"] = "cancelled"
	default:
		return badArg(t, "compact", fmt.Errorf("unknown argument %q", arg))
	}
	chunk := func(s string) map[string]any {
		return map[string]any{"sessionUpdate": "compaction_summary_chunk", "compactionId": id, "content": map[string]any{"type": "text", "text": s}}
	}
	err := t.script(
		"Compacting first.",
		map[string]any{"sessionUpdate": "compaction_update", "compactionId": id, "status": "in_progress"},
		chunk("The user asked for a demo of compaction."),
		chunk(" The agent showed notices and plans before."),
		end,
		" Carrying on with a smaller context.",
	)
	if err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}

func planItems(id string, entries ...[2]string) map[string]any {
	es := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		es = append(es, map[string]any{"content": e[0], "status": e[1], "priority": "medium"})
	}
	return map[string]any{"sessionUpdate": "plan_update", "planId": id, "plan": map[string]any{"type": "items", "entries": es}}
}

// runPlans keeps three plans by id in one turn: a checklist that
// progresses, a markdown plan that is removed, and a file plan.
func runPlans(t *turn, _ string) (acp.StopReason, error) {
	err := t.script(
		"Two plans at once.",
		planItems("backend", [2]string{"Add the endpoint", "in_progress"}, [2]string{"Write its test", "pending"}),
		map[string]any{"sessionUpdate": "plan_update", "planId": "notes", "plan": map[string]any{"type": "markdown", "content": "## Frontend\n- a button\n- a spinner"}},
		" The endpoint is in.",
		planItems("backend", [2]string{"Add the endpoint", "completed"}, [2]string{"Write its test", "in_progress"}),
		map[string]any{"sessionUpdate": "plan_removed", "planId": "notes"},
		map[string]any{"sessionUpdate": "plan_update", "planId": "design", "plan": map[string]any{"type": "file", "uri": "file://" + t.cwd + "/PLAN.md"}},
		" The frontend plan moved to PLAN.md.",
		planItems("backend", [2]string{"Add the endpoint", "completed"}, [2]string{"Write its test", "completed"}),
		" All done.",
	)
	if err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}
