package demoagent

import (
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// toolGap is the pause between the steps of the tool and plan scenarios.
const toolGap = 60 * time.Millisecond

// script sends updates in order with a pause before each; a string is said
// as text, an acp.SessionUpdate is sent as is, and a map[string]any is
// sent raw as the update object (for what the SDK cannot send).
func (t *turn) script(steps ...any) error {
	for _, s := range steps {
		if err := t.pause(toolGap); err != nil {
			return err
		}
		var err error
		switch s := s.(type) {
		case string:
			err = t.say(s)
		case acp.SessionUpdate:
			err = t.update(s)
		case map[string]any:
			err = t.raw(s)
		default:
			panic(fmt.Sprintf("demoagent: bad script step %T", s))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func textContent(s string) []acp.ToolCallContent {
	return []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(s))}
}

const lsOutput = "total 16\n" +
	"drwxr-xr-x 2 demo demo 4096 Jan  1 00:00 .\n" +
	"-rw-r--r-- 1 demo demo   42 Jan  1 00:00 go.mod\n" +
	"-rw-r--r-- 1 demo demo  311 Jan  1 00:00 main.go\n"

const mainGo = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"

// runTools behaves like a coding agent that runs a command, reads a file and
// runs failing tests, with the noise real agents send: a generic first
// title with an empty rawInput, repeated identical snapshots, a tool_call
// re-sent for the same id, a late title change, and repeated usage.
func runTools(t *turn, _ string) (acp.StopReason, error) {
	ls, read, test := t.toolID(1), t.toolID(2), t.toolID(3)
	mainPath := filepath.Join(t.cwd, "main.go")
	lsSnapshot := acp.UpdateToolCall(ls,
		acp.WithUpdateTitle("Run ls -la"),
		acp.WithUpdateKind(acp.ToolKindExecute),
		acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
		acp.WithUpdateRawInput(map[string]any{"command": "ls -la"}))
	readStart := func(status acp.ToolCallStatus) acp.SessionUpdate {
		return acp.StartToolCall(read, "Read main.go",
			acp.WithStartKind(acp.ToolKindRead),
			acp.WithStartStatus(status),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: mainPath, Line: acp.Ptr(1)}}),
			acp.WithStartRawInput(map[string]any{"path": mainPath}))
	}
	err := t.script(
		"Let me look around the project first.",
		acp.StartToolCall(ls, "Terminal",
			acp.WithStartKind(acp.ToolKindExecute),
			acp.WithStartStatus(acp.ToolCallStatusPending),
			acp.WithStartRawInput(map[string]any{})),
		lsSnapshot,
		lsSnapshot,
		lsSnapshot,
		acp.UpdateToolCall(ls,
			acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent(textContent(lsOutput)),
			acp.WithUpdateRawOutput(map[string]any{"exitCode": 0})),
		usage(1800, 200_000),
		" There is a main.go; reading it.",
		readStart(acp.ToolCallStatusPending),
		readStart(acp.ToolCallStatusInProgress),
		acp.UpdateToolCall(read,
			acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent(textContent(mainGo))),
		usage(1800, 200_000),
		" Now the tests.",
		acp.StartToolCall(test, "go test ./...",
			acp.WithStartKind(acp.ToolKindExecute),
			acp.WithStartStatus(acp.ToolCallStatusPending),
			acp.WithStartRawInput(map[string]any{"command": "go test ./..."})),
		acp.UpdateToolCall(test, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)),
		acp.UpdateToolCall(test,
			acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent(textContent("--- FAIL: TestGreeting (0.00s)\n    main_test.go:9: got \"hello\", want \"hello, gateway\"\nFAIL\nexit status 1"))),
		acp.UpdateToolCall(read, acp.WithUpdateTitle("Read main.go (8 lines)")),
		usage(1800, 200_000),
		" One test fails: TestGreeting wants \"hello, gateway\".",
	)
	if err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}

// runPlan sends a three-entry plan that moves forward across updates.
func runPlan(t *turn, _ string) (acp.StopReason, error) {
	steps := []string{"Read the code", "Write the fix", "Run the tests"}
	prio := []acp.PlanEntryPriority{acp.PlanEntryPriorityHigh, acp.PlanEntryPriorityMedium, acp.PlanEntryPriorityLow}
	plan := func(done, running int) acp.SessionUpdate {
		var es []acp.PlanEntry
		for i, s := range steps {
			st := acp.PlanEntryStatusPending
			switch {
			case i < done:
				st = acp.PlanEntryStatusCompleted
			case i == running:
				st = acp.PlanEntryStatusInProgress
			}
			es = append(es, acp.PlanEntry{Content: s, Priority: prio[i], Status: st})
		}
		return acp.UpdatePlan(es...)
	}
	err := t.script(
		"Here is my plan.",
		plan(0, -1),
		plan(0, 0),
		" Reading the code.",
		plan(1, 1),
		" Writing the fix.",
		plan(2, 2),
		" Running the tests.",
		plan(3, -1),
		" All three steps are done.",
	)
	if err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, nil
}

// Permission option ids offered by the permission scenario.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optRejectOnce  = "reject_once"
)

type verdict int

const (
	verdictAllow verdict = iota
	verdictReject
	verdictCancelled
)

// runPermission asks n times to edit main.go, each time sending the
// request before the tool_call it refers to, as real agents do.
func runPermission(t *turn, arg string) (acp.StopReason, error) {
	n, err := parseCount(arg, 1, 10)
	if err != nil {
		return badArg(t, "permission", err)
	}
	if err := t.say("I need to edit main.go."); err != nil {
		return "", err
	}
	for k := 1; k <= n; k++ {
		id := t.toolID(k)
		v, err := t.askEdit(id)
		if err != nil {
			return "", err
		}
		switch v {
		case verdictCancelled:
			return acp.StopReasonCancelled, nil
		case verdictAllow:
			err = t.script(acp.UpdateToolCall(id,
				acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
				acp.WithUpdateContent(textContent("Edited main.go"))),
				" Applied the edit.")
		case verdictReject:
			err = t.script(acp.UpdateToolCall(id,
				acp.WithUpdateStatus(acp.ToolCallStatusFailed),
				acp.WithUpdateContent(textContent("The user rejected the edit."))),
				" Okay, I left main.go alone.")
		}
		if err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, nil
}

// runPermissionAbort asks to edit main.go, as permission does, and ends
// the whole turn cancelled when the edit is rejected, as Codex does
// (codex-acp 0.16.0: "abort").
func runPermissionAbort(t *turn, _ string) (acp.StopReason, error) {
	if err := t.say("I need to edit main.go."); err != nil {
		return "", err
	}
	id := t.toolID(1)
	v, err := t.askEdit(id)
	if err != nil {
		return "", err
	}
	switch v {
	case verdictAllow:
		err = t.script(acp.UpdateToolCall(id,
			acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
			acp.WithUpdateContent(textContent("Edited main.go"))),
			" Applied the edit.")
		return acp.StopReasonEndTurn, err
	}
	return acp.StopReasonCancelled, nil
}

// askEdit sends session/request_permission for tool id on one goroutine
// and, once that request is on the wire, the tool_call notification on this
// one; then it waits for the answer. It waits for the client's answer even
// after session/cancel, because the client must answer with the cancelled
// outcome; only the end of Run stops the wait.
func (t *turn) askEdit(id acp.ToolCallId) (verdict, error) {
	path := filepath.Join(t.cwd, "main.go")
	oldText, newText := "\tfmt.Println(\"hello\")\n", "\tfmt.Println(\"hello, gateway\")\n"
	rawInput := map[string]any{"path": path, "old_string": oldText, "new_string": newText}
	content := []acp.ToolCallContent{acp.ToolDiffContent(path, newText, oldText)}
	req := acp.RequestPermissionRequest{
		SessionId: t.id,
		ToolCall: acp.ToolCallUpdate{
			ToolCallId: id,
			Title:      acp.Ptr("Edit main.go"),
			Kind:       acp.Ptr(acp.ToolKindEdit),
			RawInput:   rawInput,
			Content:    content,
		},
		Options: []acp.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	}

	type answer struct {
		resp acp.RequestPermissionResponse
		err  error
	}
	if s := t.a.lookup(t.id); s != nil && s.allowsAlways() {
		// Allowed for the session already: no question, as real agents do.
		err := t.update(acp.StartToolCall(id, "Edit main.go",
			acp.WithStartKind(acp.ToolKindEdit),
			acp.WithStartStatus(acp.ToolCallStatusPending),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}}),
			acp.WithStartRawInput(rawInput),
			acp.WithStartContent(content)))
		return verdictAllow, err
	}
	answers := make(chan answer, 1)
	seen, unwatch := t.a.wire.watchFor(`"method":"`+acp.ClientMethodSessionRequestPermission+`"`, `"toolCallId":"`+string(id)+`"`)
	defer unwatch()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		resp, err := t.a.conn.RequestPermission(t.life, req)
		answers <- answer{resp, err}
	})

	var ans answer
	got := false
	select {
	case <-seen:
	case ans = <-answers:
		got = true
	}
	var sendErr error
	if !got || ans.err == nil {
		sendErr = t.update(acp.StartToolCall(id, "Edit main.go",
			acp.WithStartKind(acp.ToolKindEdit),
			acp.WithStartStatus(acp.ToolCallStatusPending),
			acp.WithStartLocations([]acp.ToolCallLocation{{Path: path}}),
			acp.WithStartRawInput(maps.Clone(rawInput)), // req is being encoded concurrently
			acp.WithStartContent(content)))
	}
	if !got {
		ans = <-answers
	}
	switch {
	case ans.err != nil:
		return 0, fmt.Errorf("request permission: %w", ans.err)
	case sendErr != nil:
		return 0, sendErr
	case ans.resp.Outcome.Cancelled != nil || t.ctx.Err() != nil:
		return verdictCancelled, nil
	case ans.resp.Outcome.Selected == nil:
		return 0, fmt.Errorf("request permission: the answer has no outcome")
	}
	switch opt := ans.resp.Outcome.Selected.OptionId; opt {
	case optAllowAlways:
		if s := t.a.lookup(t.id); s != nil {
			s.allowAlways()
		}
		return verdictAllow, nil
	case optAllowOnce:
		return verdictAllow, nil
	case optRejectOnce:
		return verdictReject, nil
	default:
		return 0, fmt.Errorf("request permission: unknown option %q", opt)
	}
}

// runSlowTool runs one command that takes <seconds> (default 3600): a
// tool call in progress, a pause, then the call completed and a line of
// text; it honours cancel (the call stays in progress: the client shows
// it cut off). It is a turn to kill mid-tool.
func runSlowTool(t *turn, arg string) (acp.StopReason, error) {
	secs, err := parseCount(arg, 3600, 86400)
	if err != nil {
		return badArg(t, "slow-tool", err)
	}
	id := t.toolID(1)
	err = t.script(
		"Building.",
		acp.StartToolCall(id, "Run make",
			acp.WithStartKind(acp.ToolKindExecute),
			acp.WithStartStatus(acp.ToolCallStatusInProgress),
			acp.WithStartRawInput(map[string]any{"command": "make"})),
	)
	if err != nil {
		return "", err
	}
	if err := t.pause(time.Duration(secs) * time.Second); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, t.script(
		acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted), acp.WithUpdateContent(textContent("ok\n"))),
		" Built.",
	)
}
