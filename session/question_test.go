package session_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/store"
)

func isForm(op channeltest.Op) bool { return op.Op == "form" }

// folded waits until message id reads want (and shows no buttons or
// fields any more).
func (e *env) folded(th channels.ThreadRef, id channels.MessageID, want string) {
	e.t.Helper()
	e.waitOp(th, "the question folded", func(op channeltest.Op) bool {
		return op.Op == "edit" && op.Msg == id && strings.Contains(op.Text, want)
	})
	if m, _ := e.rec.Message(id); m.Options != nil || strings.Contains(m.Text, "\n") {
		e.t.Errorf("folded question = %q with inputs %v, want one line without inputs", m.Text, m.Options)
	}
}

// TestQuestionForm: each of the demo agent's questions is shown as a form
// through the adapter's Former; the answer of the person who started the
// turn reaches the agent, and the form folds to one line saying it.
func TestQuestionForm(t *testing.T) {
	for _, c := range []struct {
		prompt string
		action channels.FormAction
		values map[string][]string
		fields []string
		reply  string
		fold   string
	}{
		{"ask-choice", channels.FormAccept, map[string][]string{"color": {"green"}}, []string{"color"}, "You chose green.", "❓ Which color should the button be? — ✅ Green (Ann)"},
		{"ask-choice", channels.FormDecline, nil, []string{"color"}, "You declined to answer.", "❌ declined by Ann"},
		{"ask-multi", channels.FormAccept, map[string][]string{"platforms": {"windows", "linux"}}, []string{"platforms"}, "You picked: linux, windows.", "✅ windows, linux (Ann)"},
		{"ask-text", channels.FormAccept, map[string][]string{"name": {"Aurora"}, "retries": {"3"}}, nil, "Release Aurora with 3 retries.", "✅ Release name: Aurora; Retries: 3 (Ann)"},
		{"ask-url", channels.FormAccept, nil, []string{"url"}, "Thanks, you are signed in.", "✅ done at the link (Ann)"},
	} {
		t.Run(c.prompt+"/"+string(c.action), func(t *testing.T) {
			e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true, Form: true}})
			th := e.rec.Thread("q")
			e.say(th, ann, c.prompt)
			op := e.waitOp(th, "the question's form", isForm)
			if c.fields != nil && strings.Join(op.Options, ",") != strings.Join(c.fields, ",") {
				t.Errorf("form fields = %v, want %v", op.Options, c.fields)
			}
			if err := e.rec.AnswerForm(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, c.action, c.values); err != nil {
				t.Fatal(err)
			}
			e.waitEnd(th)
			if got := e.text(th); !strings.Contains(got, c.reply) {
				t.Errorf("reply = %q, want %q", got, c.reply)
			}
			e.folded(th, op.Msg, c.fold)
			// The question and its answer are in the transcript.
			b, ok, err := e.st.Binding(e.ctx(), th)
			if err != nil || !ok {
				t.Fatalf("binding: %v %v", ok, err)
			}
			entries, err := e.st.Entries(e.ctx(), b.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			var got []store.QuestionEntry
			for _, en := range entries {
				if q, ok := en.Body.(store.QuestionEntry); ok {
					got = append(got, q)
				}
			}
			if len(got) != 1 || got[0].Message == "" || got[0].Action != string(c.action) || got[0].Answered.IsZero() {
				t.Fatalf("transcript questions = %+v, want one settled %s", got, c.action)
			}
			if c.values != nil && c.action == channels.FormAccept {
				var content map[string]any
				if err := json.Unmarshal(got[0].Content, &content); err != nil || len(content) != len(c.values) {
					t.Errorf("transcript answer = %s (%v), want the values %v", got[0].Content, err, c.values)
				}
			}
		})
	}
}

// TestQuestionBadAnswerAndStranger: an answer that does not fit the form
// is refused privately and the question still waits; someone who neither
// started the turn nor approves is refused; the turn's author answers.
func TestQuestionBadAnswerAndStranger(t *testing.T) {
	access := map[string]session.AccessRule{"web": {Channels: []string{"c"}, Approvers: []string{"u-carol"}}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Form: true}, access: access})
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-text")
	op := e.waitOp(th, "the question's form", isForm)
	h := channels.Handle{Thread: th, ID: op.Msg}
	if err := e.rec.AnswerForm(e.ctx(), ann, h, channels.FormAccept, map[string][]string{"name": {"Aurora"}, "retries": {"2.5"}}); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "the bad answer's refusal", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, `"Retries" must be a whole number`)
	})
	if err := e.rec.AnswerForm(e.ctx(), bob, h, channels.FormAccept, map[string][]string{"name": {"Bobby"}}); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "the stranger's refusal", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "only the person who started this turn")
	})
	if m, _ := e.rec.Message(op.Msg); m.Options == nil {
		t.Fatal("the form was folded after refused answers")
	}
	if err := e.rec.AnswerForm(e.ctx(), ann, h, channels.FormAccept, map[string][]string{"name": {"Aurora"}}); err != nil {
		t.Fatal(err)
	}
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "Release Aurora with <nil> retries.") {
		t.Errorf("reply = %q, want the author's answer without retries", got)
	}
}

// TestQuestionStopCancels: a stop answers the waiting question cancel and
// folds it saying who stopped.
func TestQuestionStopCancels(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Form: true}})
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-choice")
	op := e.waitOp(th, "the question's form", isForm)
	e.say(th, bob, "stop")
	e.waitEnd(th)
	e.folded(th, op.Msg, "⏹️ cancelled (stopped by Bob)")
	if err := e.rec.AnswerForm(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, channels.FormDecline, nil); err == nil {
		t.Error("the folded form could still be answered")
	}
}

// TestQuestionTimeoutCancels: no answer within permissions.timeout
// answers cancel.
func TestQuestionTimeoutCancels(t *testing.T) {
	p := session.DefaultPolicy()
	p.Permissions.Timeout = 300 * time.Millisecond
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Form: true}, policy: &p})
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-choice")
	op := e.waitOp(th, "the question's form", isForm)
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "The question was cancelled.") {
		t.Errorf("reply = %q, want the cancelled line", got)
	}
	e.folded(th, op.Msg, "⏱️ no answer within")
	// A late answer finds it gone.
	e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Form: &channels.FormAnswer{Form: channels.Handle{Thread: th, ID: op.Msg}, Action: channels.FormDecline}, Reply: e.rec.ReplyFunc(th)})
	e.waitOp(th, "the late answer's refusal", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "no longer waiting")
	})
}

// TestQuestionChoiceWithoutForms: where the adapter has buttons but no
// forms, a single choice is shown as buttons (and Decline); a click
// answers it and the prompt folds.
func TestQuestionChoiceWithoutForms(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}})
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-choice")
	op := e.waitOp(th, "the question's buttons", isPrompt)
	if len(op.Options) != 4 || !strings.Contains(op.Text, "Which color") {
		t.Fatalf("prompt = %+v, want the question with three choices and Decline", op)
	}
	if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, op.Options[2]); err != nil {
		t.Fatal(err)
	}
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "You chose blue.") {
		t.Errorf("reply = %q, want blue", got)
	}
	m, _ := e.rec.Message(op.Msg)
	if !strings.Contains(m.Text, "✅ Blue (Ann)") || m.Options != nil {
		t.Errorf("answered prompt = %q with buttons %v", m.Text, m.Options)
	}
}

// TestQuestionNoticeWithoutInputs: where the adapter can show neither a
// form nor buttons for it, the question is a line saying so, and it is
// cancelled after the timeout.
func TestQuestionNoticeWithoutInputs(t *testing.T) {
	p := session.DefaultPolicy()
	p.Permissions.Timeout = 300 * time.Millisecond
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, policy: &p})
	th := e.rec.Thread("q")
	e.say(th, ann, "ask-text")
	e.waitOp(th, "the question's notice", hasText("cannot show the form"))
	e.waitEnd(th)
	if got := e.text(th); !strings.Contains(got, "The question was cancelled.") {
		t.Errorf("reply = %q, want the cancelled line", got)
	}
	e.waitOp(th, "the outcome line", hasText("⏱️ no answer within"))
}
