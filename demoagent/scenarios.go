package demoagent

import (
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// scenario is one scripted behaviour, picked by the first word of a prompt.
type scenario struct {
	name  string // the first word that picks it
	usage string // how to call it, for help
	about string // one line for help
	run   func(t *turn, arg string) (acp.StopReason, error)
}

// scenarioTable lists the scenarios in the order help shows them. It is a
// function rather than a variable because help reads it.
func scenarioTable() []scenario {
	return []scenario{
		{"hello", "hello", "a short plain answer in about ten chunks (any unknown first word does this too)", runHello},
		{"echo", "echo <text>", "replies exactly <text>", runEcho},
		{"help", "help", "this list", runHelp},
		{"markdown", "markdown", "about 4,000 characters of markdown in 5–20 character chunks", runMarkdown},
		{"tools", "tools", "several tool calls with the noise real agents make", runTools},
		{"plan", "plan", "a three-step plan that progresses, with text between", runPlan},
		{"storm", "storm [n]", "reads n files (default 12, at most 100) in a row with no text between", runStorm},
		{"permission", "permission [n]", "asks n times (default 1) to edit main.go, before announcing the tool", runPermission},
		{"permission-abort", "permission-abort", "asks to edit main.go, before announcing the tool; a rejection ends the whole turn cancelled (as Codex does)", runPermissionAbort},
		{"permission-run", "permission-run [long]", "asks to run a command whose dangerous end hides after 3,000 spaces (long: after 5,000 characters), touching a file outside the working directory", runPermissionRun},
		{"permission-title", "permission-title <title>", "asks to run make under the title <title> (to see how the gateway marks an agent's title)", runPermissionTitle},
		{"subagents", "subagents", "two subagents (ACP 1.33 child sessions) review and test on their own session ids, one asks a permission; then the answer", runSubagents},
		{"delegate", "delegate", "the same as subagents", runSubagents},
		{"ask-choice", "ask-choice", "asks which color (one of three) by elicitation, then says the answer", runAskChoice},
		{"ask-multi", "ask-multi", "asks which platforms (any of three) by elicitation", runAskMulti},
		{"ask-text", "ask-text", "asks for a release name (text) and retries (a number) by elicitation", runAskText},
		{"ask-url", "ask-url", "asks to sign in at a link (url elicitation)", runAskURL},
		{"slow", "slow [n]", "n words (default 200), 50 ms apart; honours cancel", runSlow},
		{"slow-tool", "slow-tool [seconds]", "runs one command (a tool call in progress) for <seconds> (default 3600), then says it is built; honours cancel", runSlowTool},
		{"silent", "silent [seconds]", "a word, then nothing for <seconds> (default 3600), then \"done.\"; honours cancel", runSilent},
		{"snapshot", "snapshot", "cumulative chunks: each repeats all the text so far", runSnapshot},
		{"usage", "usage", "50 identical usage updates and a short answer", runUsage},
		{"cost", "cost <amount>...", "reports each amount as the session's cost so far (a usage_update each, in order), then a short answer", runCost},
		{"thought", "thought", "a thought, then an answer", runThought},
		{"images", "images", "says which images the prompt carried (type and size)", runImages},
		{"draw", "draw [link|hostile]", "shows pictures: an image in the reply and a tool's screenshot (link: a link to a PNG it writes in the working directory; hostile: links and data the gateway must not show)", runDraw},
		{"title", "title <text>", "sets the session title to <text>", runTitle},
		{"unknown", "unknown", "an update with a sessionUpdate tag no client knows", runUnknown},
		{"notify", "notify", "a notification of a method no client knows (as Qwen's qwen/notify/session/prompt-suggestion after each turn), then a short answer", runNotify},
		{"burst", "burst [n]", "n chunks (default 10000) as fast as possible: \"0 \", \"1 \", …", runBurst},
		{"crash", "crash", "some text, then the agent process exits with status 3 mid-turn", runCrash},
		{"ignore-cancel", "ignore-cancel [seconds]", "a chunk every 200 ms for <seconds> (default 60); ignores cancel", runIgnoreCancel},
		{"max-tokens", "max-tokens", "short text, then stop reason max_tokens", runMaxTokens},
		{"refuse", "refuse", "stop reason refusal", runRefuse},
		{"error", "error", "the prompt fails with a JSON-RPC internal error", runError},
		{"write", "write a file and send it", "writes demo-report.txt in the working directory and posts it with the send_file tool of the MCP server it was given", runWriteAndSend},
		{"send", "send <path>", "calls send_file with <path> as is (to see what the gateway refuses)", runSendPath},
		{"read", "read the thread", "calls the read_thread tool of the MCP server it was given and says what it got", runReadThread},
		{"ask-tool", "ask-tool [text]", "asks which color (one of three; text: asks for a name instead) with the ask tool of the MCP server it was given, for agents without elicitation, then says the tool's answer", runAskTool},
		{"message", "message <text>", "says a line, posts <text> with the send_message tool of the MCP server it was given, then says another line", runSendMessage},
		{"message-after", "message-after <n> <text>", "ends the turn, then posts <text> with send_message up to n times (at most 1,000) until refused, and logs how it went on stderr", runMessageAfter},
		{"ask-after", "ask-after", "ends the turn, then asks a question with the ask tool, and logs the answer on stderr", runAskAfter},
		{"stop", "stop", "says there is nothing to stop (cancel is session/cancel)", runStop},
		// ACP 1.33 (scenarios_acp133.go).
		{"notice", "notice [flood]", "a notice of each severity with text between (flood: then 10 more after the turn)", runNotice},
		{"compact", "compact [fail|cancel]", "compacts the context: in progress, summary chunks, then completed (or failed, or cancelled)", runCompact},
		{"plans", "plans", "three plans by id in one turn: a checklist that progresses, a markdown plan removed, a file plan", runPlans},
	}
}

// findScenario returns the scenario called name, or hello.
func findScenario(name string) scenario {
	all := scenarioTable()
	for _, s := range all {
		if s.name == name {
			return s
		}
	}
	return all[0]
}

// badArg answers a scenario call with an argument it cannot use.
func badArg(t *turn, name string, err error) (acp.StopReason, error) {
	for _, s := range scenarioTable() {
		if s.name == name {
			return acp.StopReasonEndTurn, t.say(fmt.Sprintf("usage: %s (%v)", s.usage, err))
		}
	}
	return acp.StopReasonEndTurn, t.say(err.Error())
}

const helloText = "Hello! I am the gateway's demo agent. I do not think for real: " +
	"I play scripted scenarios so that you can see how the gateway shows an agent at work. " +
	"Send help to list them."

func runHello(t *turn, _ string) (acp.StopReason, error) {
	return acp.StopReasonEndTurn, t.stream(splitWords(helloText, 10), 25*time.Millisecond)
}

func runEcho(t *turn, arg string) (acp.StopReason, error) {
	if arg == "" {
		return acp.StopReasonEndTurn, nil
	}
	return acp.StopReasonEndTurn, t.say(arg)
}

func runImages(t *turn, _ string) (acp.StopReason, error) {
	if len(t.images) == 0 {
		return acp.StopReasonEndTurn, t.say("I got no images.")
	}
	parts := make([]string, len(t.images))
	for i, im := range t.images {
		parts[i] = fmt.Sprintf("%s (%d bytes)", im.mimeType, im.size)
	}
	return acp.StopReasonEndTurn, t.say(fmt.Sprintf("I got %d image(s): %s.", len(t.images), strings.Join(parts, ", ")))
}

func runHelp(t *turn, _ string) (acp.StopReason, error) {
	if err := t.say("The first word of a prompt picks a scenario:\n"); err != nil {
		return "", err
	}
	for _, s := range scenarioTable() {
		if err := t.say(fmt.Sprintf("- `%s`: %s\n", s.usage, s.about)); err != nil {
			return "", err
		}
	}
	if err := t.say("Config options (session/set_config_option):\n"); err != nil {
		return "", err
	}
	for _, d := range optionDefs {
		vals := make([]string, len(d.values))
		for i, v := range d.values {
			vals[i] = v[0]
		}
		if err := t.say(fmt.Sprintf("- `%s` (%s): %s; default %s\n", d.id, d.category, strings.Join(vals, ", "), vals[0])); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, t.say("Sessions can be listed (session/list) and closed (session/close).\n")
}

func runMarkdown(t *turn, _ string) (acp.StopReason, error) {
	return acp.StopReasonEndTurn, t.stream(splitSizes(markdownDoc, 5, 20), 2*time.Millisecond)
}

var loremWords = strings.Fields("the quick brown fox jumps over the lazy dog while a patient " +
	"agent streams one word at a time so that cancel has something to stop")

// SlowAnswer is the whole text "slow n" answers: n words.
func SlowAnswer(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(loremWords[i%len(loremWords)] + " ")
	}
	return b.String()
}

func runSlow(t *turn, arg string) (acp.StopReason, error) {
	n, err := parseCount(arg, 200, 100_000)
	if err != nil {
		return badArg(t, "slow", err)
	}
	for i := range n {
		if i > 0 {
			if err := t.pause(50 * time.Millisecond); err != nil {
				return "", err
			}
		}
		if err := t.say(loremWords[i%len(loremWords)] + " "); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, nil
}

// runSilent is an agent that hangs without output (the gateway's stall
// notice).
func runSilent(t *turn, arg string) (acp.StopReason, error) {
	secs, err := parseCount(arg, 3600, 86400)
	if err != nil {
		return badArg(t, "silent", err)
	}
	if err := t.say("Thinking… "); err != nil {
		return "", err
	}
	if err := t.pause(time.Duration(secs) * time.Second); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, t.say("done.")
}

const snapshotText = "This reply arrives as cumulative snapshots: every chunk repeats all of " +
	"the text so far, the way some agents stream."

func runSnapshot(t *turn, _ string) (acp.StopReason, error) {
	sofar := ""
	for i, w := range splitWords(snapshotText, 12) {
		if i > 0 {
			if err := t.pause(20 * time.Millisecond); err != nil {
				return "", err
			}
		}
		sofar += w
		if err := t.update(acp.UpdateAgentMessageText(sofar)); err != nil {
			return "", err
		}
	}
	t.reply.WriteString(sofar)
	return acp.StopReasonEndTurn, nil
}

// usage returns a usage_update with the numbers every repeat uses.
func usage(used, size int) acp.SessionUpdate {
	return acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{
		Used: used, Size: size, Cost: &acp.Cost{Amount: 0.0123, Currency: "USD"},
	}}
}

func runUsage(t *turn, _ string) (acp.StopReason, error) {
	for range 50 {
		if err := t.update(usage(4200, 200_000)); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, t.stream([]string{"That was fifty ", "identical usage updates."}, 0)
}

func runThought(t *turn, _ string) (acp.StopReason, error) {
	for _, c := range []string{"The user asked for a thought. ", "I will think out loud first, ", "then answer."} {
		if err := t.update(acp.UpdateAgentThoughtText(c)); err != nil {
			return "", err
		}
		if err := t.pause(30 * time.Millisecond); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, t.stream([]string{"Here is my answer, ", "after thinking."}, 25*time.Millisecond)
}

func runTitle(t *turn, arg string) (acp.StopReason, error) {
	title := strings.TrimSpace(arg)
	if title == "" {
		return badArg(t, "title", fmt.Errorf("the title is empty"))
	}
	if err := t.update(acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{Title: &title}}); err != nil {
		return "", err
	}
	t.title = title
	return acp.StopReasonEndTurn, t.say(fmt.Sprintf("I set the session title to %q.", title))
}

// unknownTag is a sessionUpdate tag no SDK knows. The SDK's typed API
// cannot send it, so the frame is written raw.
const unknownTag = "future_widget_update"

func runUnknown(t *turn, _ string) (acp.StopReason, error) {
	params := map[string]any{
		"sessionId": t.id,
		"update": map[string]any{
			"sessionUpdate": unknownTag,
			"title":         "Widget from the future",
			"content":       map[string]any{"type": "text", "text": "A client should log this and carry on."},
		},
	}
	if err := t.a.wire.notify(t.ctx, acp.ClientMethodSessionUpdate, params); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, t.say("That was an update with a tag no client knows.")
}

// notifyMethod is the method of the notify scenario's notification.
const notifyMethod = "qwen/notify/session/prompt-suggestion"

func runNotify(t *turn, _ string) (acp.StopReason, error) {
	if err := t.a.wire.notify(t.ctx, notifyMethod, map[string]any{"sessionId": t.id, "suggestion": "run the tests"}); err != nil {
		return "", err
	}
	return acp.StopReasonEndTurn, t.say("That was a notification no client knows.")
}

func runBurst(t *turn, arg string) (acp.StopReason, error) {
	n, err := parseCount(arg, 10_000, 1_000_000)
	if err != nil {
		return badArg(t, "burst", err)
	}
	for i := range n {
		if err := t.say(fmt.Sprintf("%d ", i)); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, nil
}

func runCrash(t *turn, _ string) (acp.StopReason, error) {
	if err := t.stream([]string{"Starting something risky", " and then…"}, 50*time.Millisecond); err != nil {
		return "", err
	}
	t.a.crash()
	return "", errCrashed
}

func runIgnoreCancel(t *turn, arg string) (acp.StopReason, error) {
	secs, err := parseCount(arg, 60, 3600)
	if err != nil {
		return badArg(t, "ignore-cancel", err)
	}
	for i := range secs * 5 {
		if i > 0 {
			if err := sleep(t.life, 200*time.Millisecond); err != nil {
				return "", err
			}
		}
		if err := t.sayCtx(t.life, fmt.Sprintf("tick %d ", i+1)); err != nil {
			return "", err
		}
	}
	return acp.StopReasonEndTurn, nil
}

func runMaxTokens(t *turn, _ string) (acp.StopReason, error) {
	return acp.StopReasonMaxTokens, t.stream([]string{"This answer is about to run out of ", "tokens, so it stops"}, 25*time.Millisecond)
}

func runRefuse(*turn, string) (acp.StopReason, error) {
	return acp.StopReasonRefusal, nil
}

// errScripted is the answer of the error scenario.
var errScripted = acp.NewInternalError(map[string]any{"error": "the error scenario fails on purpose"})

func runError(*turn, string) (acp.StopReason, error) {
	return "", errScripted
}

func runStop(t *turn, _ string) (acp.StopReason, error) {
	return acp.StopReasonEndTurn, t.say("Nothing is running here; to stop a turn, send session/cancel while it runs.")
}
