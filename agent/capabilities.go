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
	}
}
