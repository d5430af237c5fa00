package demoagent

import (
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// runStorm reads n files (default 12) one after the other with no text
// between them, the tool storm an agent exploring a project makes: each
// read starts in progress and completes.
func runStorm(t *turn, arg string) (acp.StopReason, error) {
	n, err := parseCount(arg, 12, 100)
	if err != nil {
		return badArg(t, "storm", err)
	}
	steps := []any{"Let me look around."}
	for i := range n {
		id, title := t.toolID(i+1), fmt.Sprintf("Read file%d.go", i)
		steps = append(steps,
			acp.StartToolCall(id, title,
				acp.WithStartKind(acp.ToolKindRead),
				acp.WithStartStatus(acp.ToolCallStatusInProgress),
				acp.WithStartRawInput(map[string]any{"path": fmt.Sprintf("file%d.go", i)})),
			acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted)))
	}
	if err := t.script(append(steps, " All read.")...); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}
