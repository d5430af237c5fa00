package agent

// clientCapabilities is what the gateway tells an agent, in initialize, it
// handles beyond the baseline. No fs and no terminal: the agent works in
// its own cwd. Each entry is one the gateway handles end to end; an agent
// sends the updates and requests of a capability only to a client that
// lists it.
func clientCapabilities() map[string]any {
	empty := struct{}{}
	return map[string]any{
		// Questions (elicitation) in both modes: a form, or a link to open.
		"elicitation": map[string]any{"form": empty, "url": empty},
		// Subagents (ACP 1.33): child sessions shown as cards of their
		// parent's turn, their requests answered as the parent's
		// (subagent.go).
		"subagents": empty,
		// ACP 1.33: the agent's notices and context compactions
		// (projector/acp133.go), boolean config options.
		"session": session133(empty),
		// ACP 1.33 plan operations: plans by id (plan_update, plan_removed).
		"planCapabilities": empty,
	}
}

// session133 is clientCapabilities.session: what ACP 1.33 added under it.
func session133(empty struct{}) map[string]any {
	return map[string]any{
		"notices":    empty,
		"compaction": empty,
		// Boolean config options: shown, /set NAME on|off.
		"configOptions": map[string]any{"boolean": empty},
	}
}
