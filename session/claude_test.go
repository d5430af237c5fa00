package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/internal/agenttest"
	"github.com/acpgw/gateway/internal/claudetest"
	"github.com/acpgw/gateway/internal/fakeanthropic"
	"github.com/acpgw/gateway/projector"
)

// The tests in this file run whole threads with the real claude-agent-acp
// against the fake Messages API (opt-in, see package claudetest).

// claudeWaitFor bounds each wait on the real agent: it starts Claude Code,
// which is slow on a loaded machine, where the demo agent's waits allow
// 30 s.
const claudeWaitFor = 3 * time.Minute

// claudeEnv is a gateway whose agent is release r of claude-agent-acp,
// working in a directory of its own against a fake Messages API that
// answers with script(cwd); each session gets the gateway's MCP server,
// and the chat shows edits, buttons, forms and uploads of up to 1 MiB.
func claudeEnv(t *testing.T, r claudetest.Release, script func(cwd string) func(fakeanthropic.Request) fakeanthropic.Reply) (*env, *fakeanthropic.Server, string) {
	t.Helper()
	cwd := t.TempDir()
	// Started before the gateway, so it is closed after the agent stopped.
	fake := fakeanthropic.New(t, script(cwd))
	spec := claudetest.Spec(t, r, fake.URL, cwd)
	e := newEnv(t, envOptions{
		spec: &spec,
		rec:  channeltest.Options{Edit: true, Prompt: true, Form: true, Upload: true, Limits: channels.Limits{MaxMessageChars: 4000, MaxUploadBytes: 1 << 20}},
		mcp:  true,
	})
	return e, fake, cwd
}

// claudeCtx is the context of one wait on the real agent.
func claudeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), claudeWaitFor)
	t.Cleanup(cancel)
	return ctx
}

// claudeOp waits until an op in th satisfies ok and returns it.
func claudeOp(e *env, th channels.ThreadRef, what string, ok func(channeltest.Op) bool) channeltest.Op {
	e.t.Helper()
	var found channeltest.Op
	err := e.rec.WaitFor(claudeCtx(e.t), th, func(ops []channeltest.Op) bool {
		for _, op := range ops {
			if ok(op) {
				found = op
				return true
			}
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v; ops: %v", what, err, e.rec.OpsIn(th))
	}
	return found
}

// claudeEnd waits for the next turn end in th.
func claudeEnd(e *env, th channels.ThreadRef) projector.TurnEnd {
	e.t.Helper()
	end, ok := e.ends.Next(claudeCtx(e.t), th)
	if !ok {
		e.t.Fatalf("no turn end in %s; ops: %v", th, e.rec.OpsIn(th))
	}
	return end
}

// toolResult returns the first tool_result for the tool_use id the fake
// model received in a main-loop request.
func toolResult(fake *fakeanthropic.Server, id string) (fakeanthropic.Block, bool) {
	for _, c := range fake.MainCalls() {
		if b, ok := c.Req.ToolResult(); ok && b.ToolUseID == id {
			return b, true
		}
	}
	return fakeanthropic.Block{}, false
}

// The AskUserQuestion scenario: the prompt, the question the model asks,
// and the model's answer once the tool's result holds the choice.
const (
	threadAskPrompt   = "ask me which color"
	threadAskQuestion = "Which color should the button be?"
	threadAskID       = "toolu_ask_1"
	threadAskReply    = "You chose Green."
)

// threadAskScript makes the model call AskUserQuestion for
// threadAskPrompt, and say what the tool's result holds once it comes.
func threadAskScript(string) func(fakeanthropic.Request) fakeanthropic.Reply {
	return func(req fakeanthropic.Request) fakeanthropic.Reply {
		if b, ok := req.ToolResult(); ok {
			if b.ToolUseID == threadAskID && strings.Contains(string(b.Content), `=\"Green\"`) { // "question"="answer"
				return fakeanthropic.Reply{Text: threadAskReply, Chunks: 3}
			}
			return fakeanthropic.Reply{Text: "The tool result did not carry the answer: " + string(b.Content)}
		}
		if req.UserSaid(threadAskPrompt) && !req.Called(threadAskID) {
			return fakeanthropic.Reply{
				ToolName:  "AskUserQuestion",
				ToolID:    threadAskID,
				ToolInput: `{"questions":[{"question":"` + threadAskQuestion + `","header":"Color","multiSelect":false,"options":[{"label":"Red","description":"warm"},{"label":"Green","description":"calm"}]}]}`,
			}
		}
		return fakeanthropic.Reply{Text: "ok"}
	}
}

// TestClaudeAskUserQuestionInThread (issue 14.6): Claude's
// AskUserQuestion, through claude-agent-acp's elicitation, is shown in
// the thread as a form with the model's choices; the answer of the person
// who started the turn reaches the model in the tool's result, the model's
// reply is delivered, and the form folds to say who chose what.
func TestClaudeAskUserQuestionInThread(t *testing.T) {
	claudetest.SkipUnlessEnabled(t)
	e, fake, _ := claudeEnv(t, claudetest.Asker, threadAskScript)
	th := e.rec.Thread("ask")
	e.say(th, ann, threadAskPrompt)

	op := claudeOp(e, th, "the question's form", isForm)
	// The choice comes first; claude-agent-acp adds a text field for an
	// answer of one's own.
	if !strings.Contains(op.Text, threadAskQuestion) || len(op.Options) == 0 {
		t.Fatalf("form = %q with fields %v, want fields asking %q", op.Text, op.Options, threadAskQuestion)
	}
	m, _ := e.rec.Message(op.Msg)
	field := m.Form.Fields[0]
	var choices []string
	for _, o := range field.Options {
		choices = append(choices, o.ID)
	}
	if field.Kind != channels.FieldChoice || !slices.Equal(choices, []string{"Red", "Green"}) {
		t.Fatalf("field = %+v, want a single choice of Red and Green", field)
	}
	if err := e.rec.AnswerForm(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, channels.FormAccept, map[string][]string{field.ID: {"Green"}}); err != nil {
		t.Fatal(err)
	}

	if end := claudeEnd(e, th); end.StopReason != "end_turn" {
		t.Errorf("turn ended %q, want end_turn", end.StopReason)
	}
	if got := e.text(th); !strings.Contains(got, threadAskReply) {
		t.Errorf("thread text = %q, want the model's %q (the answer reached it)", got, threadAskReply)
	}
	if res, ok := toolResult(fake, threadAskID); !ok || !strings.Contains(string(res.Content), "Green") {
		t.Errorf("the model got the tool_result %s (found %v), want the answer Green for %s", res.Content, ok, threadAskID)
	}
	claudeOp(e, th, "the question folded", func(op channeltest.Op) bool {
		return op.Op == "edit" && op.Msg == m.ID && strings.Contains(op.Text, "✅ Green (Ann)")
	})
	agenttest.Proved(t, agenttest.ClaudePin(claudetest.Asker), agenttest.Text, agenttest.Questions)
	t.Logf("API requests: %q", fake.Paths())
}

// The send_file scenario: the model writes a report with Claude's Write
// tool, then sends it with the gateway's MCP tool.
const (
	sendPrompt  = "write the report and send it"
	sendName    = "report.txt"
	sendBody    = "Quarterly numbers: 42\n"
	sendCaption = "the quarterly report"
	sendWriteID = "toolu_write_1"
	sendFileID  = "toolu_send_1"
	sendDone    = "Sent the report."
)

// sendFileScript makes the model write sendName in cwd, then call the
// send_file tool of the gateway's MCP server (by the name Claude Code
// lists it under), then say it is done.
func sendFileScript(cwd string) func(fakeanthropic.Request) fakeanthropic.Reply {
	path := filepath.Join(cwd, sendName)
	return func(req fakeanthropic.Request) fakeanthropic.Reply {
		if b, ok := req.ToolResult(); ok {
			switch b.ToolUseID {
			case sendWriteID:
				names := req.ToolNames()
				i := slices.IndexFunc(names, func(n string) bool { return strings.HasSuffix(n, "__send_file") })
				if i < 0 {
					return fakeanthropic.Reply{Text: "No send_file tool among " + strings.Join(names, ", ")}
				}
				input, _ := json.Marshal(map[string]string{"path": path, "caption": sendCaption})
				return fakeanthropic.Reply{ToolName: names[i], ToolID: sendFileID, ToolInput: string(input)}
			case sendFileID:
				return fakeanthropic.Reply{Text: sendDone, Chunks: 2}
			}
			return fakeanthropic.Reply{Text: "Unexpected tool result: " + string(b.Content)}
		}
		if req.UserSaid(sendPrompt) && !req.Called(sendWriteID) {
			input, _ := json.Marshal(map[string]string{"file_path": path, "content": sendBody})
			return fakeanthropic.Reply{Text: "Writing the report.", ToolName: "Write", ToolID: sendWriteID, ToolInput: string(input)}
		}
		return fakeanthropic.Reply{Text: "ok"}
	}
}

// TestClaudeSendFileInThread (issue 15.6): Claude writes a file in its
// workspace and sends it with the gateway's MCP tool send_file; the
// person allows the Write with the prompt's button, and the file arrives
// in the thread with its name, bytes and caption. The gateway's own tool
// is not asked about (issue 30.6): the gateway tells Claude its tools are
// allowed (agent.MCPServer.Trusted).
func TestClaudeSendFileInThread(t *testing.T) {
	claudetest.SkipUnlessEnabled(t)
	e, fake, cwd := claudeEnv(t, claudetest.Agent, sendFileScript)
	th := e.rec.Thread("send")
	e.say(th, ann, sendPrompt)

	// Allow every tool the agent asks about until the turn ends.
	var asked, texts []string
	var end channeltest.Op
	for end.Op == "" {
		op := claudeOp(e, th, "a permission prompt or the turn's end", func(op channeltest.Op) bool {
			return op.Op == "turn_end" || (op.Op == "prompt" && !slices.Contains(asked, string(op.Msg)))
		})
		if op.Op == "turn_end" {
			end = op
			break
		}
		asked = append(asked, string(op.Msg))
		texts = append(texts, op.Text)
		i := slices.IndexFunc(op.Options, func(o string) bool { return strings.HasSuffix(o, "/allow") })
		if i < 0 {
			t.Fatalf("prompt %q has options %v, none allowing once", op.Text, op.Options)
		}
		if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, op.Options[i]); err != nil {
			t.Fatal(err)
		}
	}
	if end.StopReason != "end_turn" {
		t.Errorf("turn ended %q, want end_turn", end.StopReason)
	}

	if b, err := os.ReadFile(filepath.Join(cwd, sendName)); err != nil || string(b) != sendBody {
		t.Fatalf("%s in the workspace = %q, %v; want the model's %q", sendName, b, err, sendBody)
	}
	var got *channels.Upload
	for _, m := range e.messages(th, channels.KindFile) {
		if m.File != nil && m.File.Name == sendName {
			got = m.File
		}
	}
	if got == nil {
		t.Fatalf("no upload of %s in the thread; ops: %v", sendName, e.rec.OpsIn(th))
	}
	if string(got.Data) != sendBody || got.Caption != sendCaption {
		t.Errorf("upload %s = %q with caption %q, want %q with %q", got.Name, got.Data, got.Caption, sendBody, sendCaption)
	}
	if text := e.text(th); !strings.Contains(text, sendDone) {
		t.Errorf("thread text = %q, want it to end with the model's %q", text, sendDone)
	}
	if res, ok := toolResult(fake, sendFileID); !ok || !strings.Contains(string(res.Content), "sent "+sendName) {
		t.Errorf("the model got the tool_result %s (found %v), want send_file's success for %s", res.Content, ok, sendFileID)
	}
	t.Logf("asked %d permissions; API requests: %q", len(asked), fake.Paths())
	if len(asked) != 1 || !strings.Contains(texts[0], sendName) {
		t.Errorf("permissions asked: %q; want one, for the Write of %s (the gateway's send_file needs none)", texts, sendName)
	}
	agenttest.Proved(t, agenttest.ClaudePin(claudetest.Agent), agenttest.Text, agenttest.Tools, agenttest.Permissions)
}
