package demoagent

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// maxLater bounds the posts of one message-after.
const maxLater = 1000

// runMessageAfter ends the turn at once and, in the background, posts
// text with the send_message tool up to n times, until one is refused, as
// an agent whose job goes on after its turn would. When it is done it
// logs (on stderr, which the gateway logs) how many were posted and the
// refusal.
func runMessageAfter(t *turn, arg string) (acp.StopReason, error) {
	count, text, _ := strings.Cut(arg, " ")
	n, err := strconv.Atoi(count)
	switch {
	case err != nil || n < 1 || n > maxLater:
		return badArg(t, "message-after", errors.New("give a count from 1 to 1000, then the text"))
	case text == "":
		return badArg(t, "message-after", errors.New("give the text to send"))
	}
	bg := &turn{a: t.a, id: t.id, ctx: t.life, life: t.life, seq: t.seq, cwd: t.cwd, mcp: t.mcp}
	t.a.handlers.Go(func() {
		posted, refused := 0, ""
		for posted < n {
			res, isError, err := bg.callTool("send_message", map[string]any{"text": text})
			if err != nil {
				refused = err.Error()
				break
			}
			if isError {
				refused = res
				break
			}
			posted++
		}
		t.a.log.Warn("message-after finished", "posted", posted, "refused", refused)
	})
	return acp.StopReasonEndTurn, t.say("I will post it after this turn.")
}

// runAskAfter ends the turn at once and, in the background, asks a
// question with the ask tool; it logs (on stderr) the tool's answer.
func runAskAfter(t *turn, _ string) (acp.StopReason, error) {
	bg := &turn{a: t.a, id: t.id, ctx: t.life, life: t.life, seq: t.seq, cwd: t.cwd, mcp: t.mcp}
	t.a.handlers.Go(func() {
		res, isError, err := bg.callTool("ask", map[string]any{"question": "Shall I deploy now?", "options": []string{"yes", "no"}})
		if err != nil {
			res, isError = err.Error(), true
		}
		t.a.log.Warn("ask-after finished", "refused", isError, "result", res)
	})
	return acp.StopReasonEndTurn, t.say("I will ask after this turn.")
}

// runCost reports each of the amounts in arg (any number strconv reads,
// "-100" and "1e308" too) as the session's cost so far, one usage_update
// each, in order, then says how many it reported.
func runCost(t *turn, arg string) (acp.StopReason, error) {
	fields := strings.Fields(arg)
	if len(fields) == 0 {
		return badArg(t, "cost", errors.New("give one or more amounts"))
	}
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return badArg(t, "cost", fmt.Errorf("amount %q is not a finite number", f))
		}
		u := acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{
			Used: 1000 * (i + 1), Size: 200_000, Cost: &acp.Cost{Amount: v, Currency: "USD"},
		}}
		if err := t.update(u); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, t.say(fmt.Sprintf("I reported %d costs.", len(fields)))
}
