package sysmsg

import "strings"

// AgentCommandLabel is how an agent's own command is offered where people
// pick one (Discord's /agent-command autocomplete): its name and, when
// the agent gave one, its description, on one line.
func AgentCommandLabel(name, description string) string {
	d := strings.Join(strings.Fields(description), " ")
	if d == "" {
		return name
	}
	return name + " — " + d
}
