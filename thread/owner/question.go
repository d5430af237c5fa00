package owner

// The agent's questions (elicitation) on the thread's owner: the thread is
// the session's agent.Questioner. A question is shown as a form where the
// adapter is a channels.Former, as buttons (a channels.Choice) for a
// single choice where it is a Prompter, and as a notice otherwise (it
// then waits for its link, its timeout or a stop). The machine decides
// who may answer and when it ends (machine_questions.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// How a question is shown.
type questionView uint8

const (
	viewForm   questionView = iota + 1 // a channels.Form
	viewChoice                         // buttons, one per choice, and Decline
	viewNotice                         // a line: nothing to answer in the chat
)

// question is an agent's question waiting for an answer. Its fields
// after answer belong to the thread's owner.
type question struct {
	id      string
	q       agent.Question
	asked   time.Time
	answer  chan agent.Answer // capacity 1; written once
	view    questionView
	msg     channels.Handle // the form's message, once posted
	settled bool
	posted  bool // its post returned (with a handle or an error)
	// inTurn: it may be asked only while a turn runs (the ask tool);
	// refused, set by the owner before it answers, says it was not.
	inTurn  bool
	refused error
}

// The owner's question events.
type (
	// questionEv is the agent's question; q.answer gets the answer.
	questionEv struct{ q *question }
	// questionPostedEv: the adapter showed q's form (h), or could not.
	questionPostedEv struct {
		q   *question
		h   channels.Handle
		err error
	}
	// formEv is a person's answer to a form.
	formEv struct {
		in  channels.Inbound
		acc Access
	}
)

// Question implements agent.Questioner: it hands q to the thread's
// owner and blocks until the machine settles it. A url question whose
// Completed closes is answered accept; ctx ending withdraws it.
func (t *Thread) Question(ctx context.Context, q agent.Question) agent.Answer {
	a, _ := t.ask(ctx, q, false)
	return a
}

// ask is Question; with inTurn the question is refused (errNoTurn, and
// a cancel) unless a turn runs when the owner takes it.
func (t *Thread) ask(ctx context.Context, q agent.Question, inTurn bool) (agent.Answer, error) {
	qs := &question{id: NewID(), q: q, asked: time.Now(), answer: make(chan agent.Answer, 1), inTurn: inTurn}
	cancelled := agent.Answer{Action: agent.Cancel}
	if !t.inbox.send(questionEv{q: qs}) {
		return cancelled, nil // the thread has shut down
	}
	done := q.Completed
	for {
		select {
		case a := <-qs.answer:
			return a, qs.refused
		case <-done:
			done = nil
			t.inbox.event(thread.QuestionDone{ID: qs.id})
		case <-ctx.Done():
			if !t.inbox.event(thread.QuestionWithdrawn{ID: qs.id}) {
				select {
				case a := <-qs.answer:
					return a, qs.refused
				default:
					return cancelled, nil
				}
			}
			a := <-qs.answer
			return a, qs.refused
		}
	}
}

// questionAsked is the agent's question, on the owner.
func (t *Thread) questionAsked(e questionEv) {
	if e.q.inTurn && !t.proj.InTurn() {
		t.d.Log.Info("ask refused: no turn is running", "thread", t.ref, "question", e.q.id)
		e.q.refused = errNoTurn
		e.q.answer <- agent.Answer{Action: agent.Cancel}
		return
	}
	if c := e.q.q.Subagent; c != "" {
		e.q.q.Message = t.proj.SubagentAsks(c, e.q.q.Message)
	}
	t.questions[e.q.id] = e.q
	if t.tr != nil {
		q := e.q.q
		names := make([]string, len(q.Fields))
		for i, f := range q.Fields {
			names[i] = f.Name
		}
		t.tr.Question(store.QuestionEntry{RequestID: e.q.id, ToolCallID: q.ToolCallID, Message: q.Message, Mode: q.Mode, URL: q.URL, Fields: names, Asked: e.q.asked})
	}
	t.d.Log.Info("the agent asks a question", "thread", t.ref, "question", e.q.id, "mode", e.q.q.Mode, "fields", len(e.q.q.Fields))
	t.apply(thread.QuestionAsked{ID: e.q.id, Timeout: t.policy.Permissions.Timeout})
}

// performQuestion performs the machine's question effects.
func (t *Thread) performQuestion(f thread.Effect) {
	switch f := f.(type) {
	case thread.ShowQuestion:
		if q := t.questions[f.ID]; q != nil {
			t.showQuestion(q)
		}
	case thread.SettleQuestion:
		if q := t.questions[f.ID]; q != nil {
			t.settleQuestion(q, f)
		}
	case thread.NotAsker:
		if in := t.replyTo; in != nil {
			t.reply(*in, sysmsg.RefuseNotAsker)
		}
	}
}

// showQuestion shows q as the adapter can.
func (t *Thread) showQuestion(q *question) {
	caps := t.runner.Caps()
	single := thread.SingleChoice(q.q)
	switch {
	case caps.Form:
		q.view = viewForm
		t.runner.Form(q.id, questionForm(q.q), func(h channels.Handle, err error) {
			t.inbox.send(questionPostedEv{q: q, h: h, err: err})
		})
	case caps.Prompt && single:
		q.view = viewChoice
		t.view().ShowQuestionChoice(q.id, q.q, func(h channels.Handle, err error) {
			t.inbox.send(questionPostedEv{q: q, h: h, err: err})
		})
	default:
		q.view = viewNotice
		t.laneNotice(sysmsg.Asked{Message: q.q.Message, URL: q.q.URL, Unanswerable: q.q.Mode != "url", Timeout: t.policy.Permissions.Timeout})
	}
}

// formOnItsWay reports whether a question's form is being posted: its
// message id is not known yet.
func (t *Thread) formOnItsWay() bool {
	for _, c := range t.questions {
		if c.view == viewForm && !c.posted {
			return true
		}
	}
	return false
}

// questionPosted: q's form or buttons were shown as h, or could not be.
// Answers that came before a form's id was known are tried again.
func (t *Thread) questionPosted(q *question, h channels.Handle, err error) {
	q.posted = true
	defer func() {
		early := t.earlyAnswers
		t.earlyAnswers = nil
		for _, e := range early {
			t.formAnswer(e.in, e.acc)
		}
	}()
	if err != nil {
		t.d.Log.Error("the agent's question could not be shown; answered cancel", "thread", t.ref, "err", err)
		t.apply(thread.QuestionUnshown{ID: q.id})
		return
	}
	q.msg = h
}

// settleQuestion answers q to the agent as the machine decided and folds
// it to its outcome.
func (t *Thread) settleQuestion(q *question, f thread.SettleQuestion) {
	delete(t.questions, q.id)
	q.settled = true
	a, out, err := thread.QuestionSettlement(q.q, f, q.asked, time.Now())
	if err != nil {
		// Checked when the answer came; a url question has no fields.
		t.d.Log.Warn("an answer that was checked no longer converts; answered cancel", "thread", t.ref, "err", err)
	}
	q.answer <- a
	if t.tr != nil {
		var content json.RawMessage
		if a.Content != nil {
			content, _ = json.Marshal(a.Content) // strings, numbers, bools, lists of strings
		}
		t.tr.QuestionAnswered(q.id, a.Action, content, time.Now())
	}
	t.d.Log.Info("the agent's question settled", "thread", t.ref, "question", q.id, "status", string(f.Status), "action", a.Action, "by", f.By.ID)
	if f.Unshown {
		return
	}
	text := sysmsg.Text(out)
	switch q.view {
	case viewChoice:
		if !f.Shutdown {
			t.runner.Resolve(q.id, text)
		}
	case viewForm:
		switch {
		case f.NotShown:
		case !f.Shutdown:
			// Folded in the lane, posted or not yet.
			t.runner.Resolve(q.id, text)
		case q.msg.Known():
			t.foldFormAtShutdown(q.msg, text)
		}
	case viewNotice:
		if !f.Shutdown {
			t.runner.Push(projector.Notice{Text: text})
		}
	}
}

// formAnswer is a person's answer to a form: to a waiting question, in
// a valid shape, by someone who may (the machine says).
func (t *Thread) formAnswer(in channels.Inbound, acc Access) {
	var q *question
	for _, c := range t.questions {
		if c.view == viewForm && c.msg.Known() && c.msg.ID == in.Form.Form.ID {
			q = c
		}
	}
	if q == nil {
		if t.formOnItsWay() {
			// The person saw the form before its post returned its id
			// (a fast click, or a slow reply from the platform): the
			// answer waits for the post.
			t.earlyAnswers = append(t.earlyAnswers, formEv{in: in, acc: acc})
			return
		}
		t.reply(in, sysmsg.RefusePromptGone)
		return
	}
	if in.Form.Action == channels.FormAccept && q.q.Mode == "form" {
		if _, _, err := thread.AnswerContent(q.q, in.Form.Values); err != nil {
			t.reply(in, sysmsg.BadAnswer{Err: err.Error()})
			return
		}
	}
	t.replyTo = &in
	t.apply(thread.QuestionAnswer{ID: q.id, Action: in.Form.Action, Values: in.Form.Values, By: in.Author, Approver: acc.MayApprove(in)})
	t.replyTo = nil
}

// questionChoice answers a question shown as buttons from a click; it
// reports whether the click was for a question.
func (t *Thread) questionChoice(e choiceEv) bool {
	q := t.questions[e.promptID]
	if q == nil || q.view != viewChoice {
		return false
	}
	ans := thread.QuestionAnswer{ID: q.id, Action: channels.FormDecline, By: e.in.Author, Approver: e.acc.MayApprove(e.in)}
	if e.optionID != thread.DeclineOption {
		f := q.q.Fields[0]
		i, err := strconv.Atoi(e.optionID)
		if err != nil || i < 0 || i >= len(f.Choices) {
			t.reply(e.in, sysmsg.RefusePromptGone)
			return true
		}
		ans.Action, ans.Values = channels.FormAccept, map[string][]string{f.Name: {f.Choices[i].Value}}
	}
	t.replyTo = &e.in
	t.apply(ans)
	t.replyTo = nil
	return true
}

// questionForm is the form that shows q.
func questionForm(q agent.Question) channels.Form {
	title := sysmsg.FormTitle(q.Title)
	text := q.Message
	if q.Description != "" && q.Description != q.Message {
		text += "\n\n" + q.Description
	}
	f := channels.Form{Title: title, Text: text, URL: q.URL}
	for _, fd := range q.Fields {
		cf := channels.Field{ID: fd.Name, Label: thread.FieldLabel(fd), Help: fd.Description, Required: fd.Required, Min: fd.Min, Max: fd.Max}
		switch fd.Kind {
		case agent.FieldText:
			cf.Kind = channels.FieldText
		case agent.FieldNumber, agent.FieldInteger:
			cf.Kind = channels.FieldNumber
		case agent.FieldBool:
			cf.Kind = channels.FieldBool
		case agent.FieldChoice:
			cf.Kind = channels.FieldChoice
		case agent.FieldMulti:
			cf.Kind = channels.FieldMulti
		}
		for _, c := range fd.Choices {
			cf.Options = append(cf.Options, channels.Option{ID: c.Value, Label: c.Title})
		}
		cf.Default = defaultText(fd.Default)
		f.Fields = append(f.Fields, cf)
	}
	return f
}

// defaultText is a JSON default as a form shows it: a string's text, a
// number or bool as written, a list's items joined by commas.
func defaultText(raw string) string {
	if raw == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var s []string
		for _, x := range v {
			s = append(s, fmt.Sprint(x))
		}
		return strings.Join(s, ",")
	case float64, bool:
		return raw
	}
	return ""
}
