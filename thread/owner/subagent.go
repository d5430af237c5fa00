package owner

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/tooldisplay"
)

// childUpdate is an update of one of the session's subagents (u.Child,
// package agent routes it here once the session announced the child): it
// shows on the child's card only (the projector), and changes nothing of
// the thread's own (options, transcript, cost, budgets).
func (t *Thread) childUpdate(u projector.Update, history bool) {
	if history {
		return
	}
	t.apply(thread.AgentOutput{})
	if t.m.Stopped() {
		return
	}
	t.view().Update(&u, false)
	t.subagentDetail(u.Child)
}

// subagentDetail gives adapters that show a line's details what child's
// card shows on click: its task, its tool lines and its text.
func (t *Thread) subagentDetail(child string) {
	if !t.runner.Caps().ToolDetail {
		return
	}
	in, out, ok := t.proj.SubagentDetail(child)
	if !ok {
		return
	}
	t.runner.ToolDetail(string(t.proj.SubagentKey(child)), channels.ToolDetail{
		Input:  cutDetail(tooldisplay.Visible(tooldisplay.Redact(in))),
		Output: cutDetail(tooldisplay.Visible(tooldisplay.Redact(out))),
	})
}
