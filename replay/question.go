package replay

// The agent's questions (elicitation/create) in a replay: asked of the
// machine (QuestionAsked), shown as production shows them where the chat
// has buttons but no forms (a single choice as buttons, through
// thread.View; any other question as a card without buttons, since the
// recording says how it was answered), answered by the recorded response
// (QuestionAnswer), and folded to the line production folds it to
// (thread.QuestionSettlement). Their messages print as kind "question".

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// KindQuestion is the kind the replay prints for the messages of an
// agent's question (which the chat shows as a prompt).
const KindQuestion channels.Kind = "question"

// question is an agent's question of the replay.
type question struct {
	q     agent.Question
	asked time.Time
	shown bool // posted in the thread
	// card: shown as a notice (not a single choice), which is edited to
	// its outcome.
	card bool
}

// questionID is the question of the agent's request id: deterministic,
// so the output is.
func questionID(requestID string) string { return "question-" + requestID }

// questionAsked is the agent's elicitation/create f: asked of people.
func (r *run) questionAsked(f *acpwire.Frame, line int) {
	q, err := agent.ParseQuestion(f.Params)
	if err != nil {
		fmt.Fprintf(r.o.Warn, "line %d: question not shown: %v\n", line, err)
		return
	}
	if r.children[q.SessionID] {
		q.Subagent = q.SessionID
		q.Message = r.proj.SubagentAsks(q.Subagent, q.Message)
	}
	id := questionID(f.IDString())
	r.questions[id] = &question{q: q, asked: r.now}
	if q.ElicitationID != "" {
		r.elicitations[q.ElicitationID] = id
	}
	r.apply(thread.QuestionAsked{ID: id, Timeout: never})
}

// questionDone is the agent's elicitation/complete: the person finished
// at a url question's link.
func (r *run) questionDone(params []byte) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if id, ok := r.elicitations[p.ElicitationID]; ok {
		r.apply(thread.QuestionDone{ID: id})
	}
}

// questionAnswered is the recorded answer f to a question: accept with
// its content, decline, or cancel (a cancel the gateway gave for a stop
// follows the stop's session/cancel, which settled the question first;
// any other reads as cancelled by the person).
func (r *run) questionAnswered(f *acpwire.Frame, line int) {
	id := questionID(f.IDString())
	if !r.m.Asking(id) {
		return // settled already (a stop), never shown, or not decoded
	}
	if q := r.questions[id]; q != nil {
		for i := 0; !q.shown && !r.next.IsZero() && i < 100_000; i++ {
			r.now = later(r.now, r.next)
			r.step(r.ctx)
		}
	}
	var res struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if f.Kind == acpwire.Result {
		if err := json.Unmarshal(f.Result, &res); err != nil {
			fmt.Fprintf(r.o.Warn, "line %d: question answer: %v; taken as cancelled\n", line, err)
		}
	}
	ans := thread.QuestionAnswer{ID: id, Action: channels.FormCancel, By: r.o.Person, Approver: true}
	switch res.Action {
	case agent.Accept:
		ans.Action, ans.Values = channels.FormAccept, formValues(res.Content)
	case agent.Decline:
		ans.Action = channels.FormDecline
	}
	r.apply(ans)
}

// formValues is an answer's content as a form's values: text as is,
// numbers and booleans as written, lists item by item.
func formValues(content map[string]any) map[string][]string {
	vs := make(map[string][]string, len(content))
	for k, v := range content {
		switch v := v.(type) {
		case string:
			vs[k] = []string{v}
		case float64:
			vs[k] = []string{strconv.FormatFloat(v, 'g', -1, 64)}
		case bool:
			vs[k] = []string{strconv.FormatBool(v)}
		case []any:
			for _, x := range v {
				vs[k] = append(vs[k], fmt.Sprint(x))
			}
		}
	}
	return vs
}

// showQuestion performs a ShowQuestion.
func (r *run) showQuestion(id string) {
	q := r.questions[id]
	if q == nil {
		return
	}
	if thread.SingleChoice(q.q) {
		r.view.ShowQuestionChoice(id, q.q, func(h channels.Handle, err error) {
			if err != nil {
				r.apply(thread.QuestionUnshown{ID: id})
				return
			}
			q.shown = true
		})
		return
	}
	// Production shows it as a form; a replay shows what was asked.
	q.card, q.shown = true, true
	text := sysmsg.Asked{Message: q.q.Message, URL: q.q.URL}.Body()
	r.questionTexts[text] = true
	r.view.Lane.Notice(id, text)
}

// settleQuestion performs a SettleQuestion: the question folds to its
// outcome.
func (r *run) settleQuestion(f thread.SettleQuestion) {
	q := r.questions[f.ID]
	delete(r.questions, f.ID)
	if q == nil || f.Unshown || f.Shutdown {
		return
	}
	_, out, _ := thread.QuestionSettlement(q.q, f, q.asked, r.now)
	text := sysmsg.Text(out)
	r.questionTexts[text] = true
	if q.card {
		r.view.Lane.ReplaceNotice(f.ID, text)
		return
	}
	r.view.Lane.Resolve(f.ID, text)
}

// questionKinds prints the messages of questions as KindQuestion: those
// posted under a question's key (its buttons, its card), and the cards
// and outcome lines posted without a key where the chat cannot edit.
func (r *run) questionKinds(ops []channeltest.Op) {
	for i, op := range ops {
		m, _ := r.rec.Message(op.Msg)
		_, key, _ := strings.Cut(m.Key, ":")
		if strings.HasPrefix(key, "question-") || (op.Op == "send" && r.questionTexts[op.Text]) {
			ops[i].Kind = KindQuestion
		}
	}
}
