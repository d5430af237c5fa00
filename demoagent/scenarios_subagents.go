package demoagent

import (
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// The subagents scenario (ACP 1.33): the session announces two child
// sessions with subagent_update and gives one its task with a
// session_message_chunk (SDK v0.13.5 knows neither: raw frames); the
// children's tool calls and text go out as ordinary session/update on
// their own ids; the second asks a permission on its id. Then both go
// idle and the parent answers.

// childID is the k-th child session of the turn.
func (t *turn) childID(k int) acp.SessionId {
	return acp.SessionId(fmt.Sprintf("%s.sub-%d-%d", t.id, t.seq, k))
}

// subagent sends a subagent_update for child on the turn's session with
// the fields given (a patch).
func (t *turn) subagent(child acp.SessionId, fields map[string]any) error {
	upd := map[string]any{"sessionUpdate": "subagent_update", "sessionId": child}
	for k, v := range fields {
		upd[k] = v
	}
	return t.a.wire.notify(t.ctx, acp.ClientMethodSessionUpdate, map[string]any{"sessionId": t.id, "update": upd})
}

// as sends u on session id (a child's) unless the turn was cancelled.
func (t *turn) as(id acp.SessionId, u acp.SessionUpdate) error {
	if err := t.a.conn.SessionUpdate(t.ctx, acp.SessionNotification{SessionId: id, Update: u}); err != nil {
		return fmt.Errorf("send session/update: %w", err)
	}
	return nil
}

func running(s string) map[string]any { return map[string]any{"state": map[string]any{"state": s}} }

func runSubagents(t *turn, _ string) (acp.StopReason, error) {
	review, tests := t.childID(1), t.childID(2)
	readID, testID := acp.ToolCallId(string(review)+".read"), acp.ToolCallId(string(tests)+".test")
	cancel := map[string]any{"cancel": map[string]any{}}
	steps := []func() error{
		func() error { return t.say("I split the work between two subagents.") },
		func() error {
			return t.subagent(review, map[string]any{"title": "Review the diff", "state": map[string]any{"state": "running"}, "capabilities": cancel})
		},
		func() error {
			return t.a.wire.notify(t.ctx, acp.ClientMethodSessionUpdate, map[string]any{"sessionId": t.id, "update": map[string]any{
				"sessionUpdate": "session_message_chunk", "messageId": "task-1", "senderSessionId": t.id, "recipientSessionId": review,
				"content": map[string]any{"type": "text", "text": "Read the change to main.go and list its risks."},
			}})
		},
		func() error {
			return t.subagent(tests, map[string]any{"title": "Run the tests", "description": "Run go test and report failures", "state": map[string]any{"state": "running"}, "capabilities": cancel})
		},
		func() error {
			return t.as(review, acp.StartToolCall(readID, "Read main.go", acp.WithStartKind(acp.ToolKindRead),
				acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartLocations([]acp.ToolCallLocation{{Path: "main.go"}})))
		},
		func() error {
			return t.as(review, acp.UpdateToolCall(readID, acp.WithUpdateStatus(acp.ToolCallStatusCompleted), acp.WithUpdateContent(textContent("package main"))))
		},
		func() error {
			return t.as(review, acp.UpdateAgentMessageText("The diff only renames a variable: no risk."))
		},
		func() error {
			return t.as(tests, acp.StartToolCall(testID, "Run go test", acp.WithStartKind(acp.ToolKindExecute),
				acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(map[string]any{"command": "go test ./..."})))
		},
		func() error { return t.subagent(tests, running("requires_action")) },
	}
	for _, step := range steps {
		if err := t.pause(toolGap); err != nil {
			return "", err
		}
		if err := step(); err != nil {
			return "", err
		}
	}
	resp, err := t.a.conn.RequestPermission(t.life, acp.RequestPermissionRequest{
		SessionId: tests,
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: testID, Title: acp.Ptr("Run go test"), Kind: acp.Ptr(acp.ToolKindExecute),
			RawInput: map[string]any{"command": "go test ./..."},
		},
		Options: []acp.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: optRejectOnce, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("request permission: %w", err)
	case resp.Outcome.Cancelled != nil || t.ctx.Err() != nil:
		return acp.StopReasonCancelled, nil
	}
	allowed := resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowOnce
	status, said, verdict := acp.ToolCallStatusFailed, "I was not allowed to run the tests.", "was not allowed to run them"
	if allowed {
		status, said, verdict = acp.ToolCallStatusCompleted, "All tests pass.", "says they all pass"
	}
	steps = []func() error{
		func() error { return t.subagent(tests, running("running")) },
		func() error {
			return t.as(tests, acp.UpdateToolCall(testID, acp.WithUpdateStatus(status), acp.WithUpdateContent(textContent("ok"))))
		},
		func() error { return t.as(tests, acp.UpdateAgentMessageText(said)) },
		func() error { return t.subagent(review, running("idle")) },
		func() error { return t.subagent(tests, running("idle")) },
		func() error {
			return t.say(" The review found no risk, and the tests subagent " + verdict + ".")
		},
	}
	for _, step := range steps {
		if err := t.pause(toolGap); err != nil {
			return "", err
		}
		if err := step(); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, nil
}
