package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// askEnv is a gateway whose demo agent is given the gateway's MCP server,
// on a recording adapter with rec's capabilities.
// Carol approves; Ann and Bob do not.
func askEnv(t *testing.T, rec channeltest.Options, p *session.Policy) *env {
	t.Helper()
	rec.Upload = true
	rec.Limits = channels.Limits{MaxMessageChars: 4000, MaxUploadBytes: 1 << 20}
	access := map[string]session.AccessRule{"web": {Channels: []string{"c"}, Approvers: []string{"u-carol"}}}
	return newEnv(t, envOptions{mcp: true, rec: rec, policy: p, access: access})
}

// TestAskToolChoice: the ask tool with options shows the question UI of
// elicitation (a form with one choice); someone who did not start the
// turn is refused, the author's pick is the tool's result, and the form
// folds.
func TestAskToolChoice(t *testing.T) {
	e := askEnv(t, channeltest.Options{Edit: true, Prompt: true, Form: true}, nil)
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-tool")
	op := e.waitOp(th, "the question's form", isForm)
	if strings.Join(op.Options, ",") != "answer" || !strings.Contains(op.Text, "Which color should the button be?") {
		t.Fatalf("form = %+v, want the question with one field", op)
	}
	h := channels.Handle{Thread: th, ID: op.Msg}
	if err := e.rec.AnswerForm(e.ctx(), bob, h, channels.FormAccept, map[string][]string{"answer": {"red"}}); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "the stranger's refusal", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "only the person who started this turn")
	})
	if err := e.rec.AnswerForm(e.ctx(), ann, h, channels.FormAccept, map[string][]string{"answer": {"green"}}); err != nil {
		t.Fatal(err)
	}
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "ask answered:\nanswer: green") {
		t.Errorf("reply = %q, want the author's answer as the tool's result", got)
	}
	e.folded(th, op.Msg, "✅ green (Ann)")
}

// TestAskToolButtons: where the adapter has buttons but no forms, the
// options are buttons (and Decline); Decline is the tool's result.
func TestAskToolButtons(t *testing.T) {
	e := askEnv(t, channeltest.Options{Edit: true, Prompt: true}, nil)
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-tool")
	op := e.waitOp(th, "the question's buttons", isPrompt)
	if len(op.Options) != 4 {
		t.Fatalf("prompt = %+v, want three choices and Decline", op)
	}
	if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, op.Options[3]); err != nil {
		t.Fatal(err)
	}
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "ask answered:\ndeclined:") {
		t.Errorf("reply = %q, want the declined result", got)
	}
}

// TestAskToolText: without options the question is a text field, and
// what was typed is the result.
func TestAskToolText(t *testing.T) {
	e := askEnv(t, channeltest.Options{Edit: true, Form: true}, nil)
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-tool text")
	op := e.waitOp(th, "the question's form", isForm)
	if err := e.rec.AnswerForm(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, channels.FormAccept, map[string][]string{"answer": {"Aurora"}}); err != nil {
		t.Fatal(err)
	}
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "ask answered:\nanswer: Aurora") {
		t.Errorf("reply = %q, want the typed answer", got)
	}
}

// TestAskToolStopCancels: a stop settles the ask tool's question cancel
// and the tool answers cancelled.
func TestAskToolStopCancels(t *testing.T) {
	e := askEnv(t, channeltest.Options{Edit: true, Form: true}, nil)
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-tool")
	op := e.waitOp(th, "the question's form", isForm)
	e.say(th, bob, "stop")
	e.waitEnd(th)
	e.folded(th, op.Msg, "⏹️ cancelled (stopped by Bob)")
	e.logs.waitFor(t, e.ctx(), `msg="the ask tool's question settled"`)
	for line := range strings.Lines(e.logs.String()) {
		if strings.Contains(line, `msg="the ask tool's question settled"`) && !strings.Contains(line, "action=cancel") {
			t.Errorf("the ask tool did not answer cancelled: %s", line)
		}
	}
}

// TestAskToolTimeoutCancels: no answer within permissions.timeout: the
// tool answers cancelled.
func TestAskToolTimeoutCancels(t *testing.T) {
	p := session.DefaultPolicy()
	p.Permissions.Timeout = 300 * time.Millisecond
	e := askEnv(t, channeltest.Options{Edit: true, Form: true}, &p)
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-tool")
	op := e.waitOp(th, "the question's form", isForm)
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "ask answered:\ncancelled: ") {
		t.Errorf("reply = %q, want the cancelled result", got)
	}
	e.folded(th, op.Msg, "⏱️ no answer within")
}
