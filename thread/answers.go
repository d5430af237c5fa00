package thread

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// What a settled question means: the answer the agent gets, checked
// against the question's fields, and the line the question folds to.

// QuestionSettlement is what a SettleQuestion f means for question q,
// asked at asked and settled at now: the answer the agent gets and the
// line the question folds to. An error is for values that do not fit q
// (checked when they came): the answer is then cancel.
func QuestionSettlement(q agent.Question, f SettleQuestion, asked, now time.Time) (agent.Answer, sysmsg.QuestionSettled, error) {
	a := agent.Answer{Action: agent.Cancel}
	out := sysmsg.QuestionSettled{Question: q.Message, Action: agent.Cancel, By: displayName(f.By)}
	switch {
	case f.Action == channels.FormAccept && f.Done:
		a.Action, out.Action, out.Done, out.By = agent.Accept, agent.Accept, true, ""
	case f.Action == channels.FormAccept && q.Mode == "url":
		a.Action, out.Action, out.Done = agent.Accept, agent.Accept, true
	case f.Action == channels.FormAccept:
		content, qa, err := AnswerContent(q, f.Values)
		if err != nil {
			return a, out, err
		}
		a.Action, a.Content, out.Action, out.Answers = agent.Accept, content, agent.Accept, qa
	case f.Action == channels.FormDecline:
		a.Action, out.Action = agent.Decline, agent.Decline
	case f.Shutdown:
		out.Restart, out.By = true, ""
	case f.Status == store.PromptExpired:
		out.Expired, out.After, out.By = true, now.Sub(asked), ""
	case f.NotShown:
		out.NotShown, out.By = true, ""
	case f.By.ID == "" && f.By.Name == "":
		out.By = ""
	}
	return a, out, nil
}

// AnswerContent converts a form's values (by field name) to q's answer
// content, and the lines the folded question shows. It returns an error
// naming the field when a value does not fit it.
func AnswerContent(q agent.Question, values map[string][]string) (map[string]any, []sysmsg.QA, error) {
	content := map[string]any{}
	var qa []sysmsg.QA
	for _, f := range q.Fields {
		label := FieldLabel(f)
		var vs []string
		for _, v := range values[f.Name] {
			if v = strings.TrimSpace(v); v != "" {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			if f.Required {
				return nil, nil, fmt.Errorf("%q is required", label)
			}
			continue
		}
		shown := vs[:1]
		switch f.Kind {
		case agent.FieldText:
			n := float64(utf8.RuneCountInString(vs[0]))
			if (f.Min != nil && n < *f.Min) || (f.Max != nil && n > *f.Max) {
				return nil, nil, outOfBounds(label, "characters", f.Min, f.Max)
			}
			content[f.Name] = vs[0]
		case agent.FieldNumber, agent.FieldInteger:
			x, err := strconv.ParseFloat(vs[0], 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, nil, fmt.Errorf("%q must be a number", label)
			}
			if f.Kind == agent.FieldInteger && x != math.Trunc(x) {
				return nil, nil, fmt.Errorf("%q must be a whole number", label)
			}
			if (f.Min != nil && x < *f.Min) || (f.Max != nil && x > *f.Max) {
				return nil, nil, outOfBounds(label, "", f.Min, f.Max)
			}
			content[f.Name] = x
		case agent.FieldBool:
			b, err := strconv.ParseBool(vs[0])
			if err != nil {
				return nil, nil, fmt.Errorf("%q must be true or false", label)
			}
			content[f.Name] = b
		case agent.FieldChoice, agent.FieldMulti:
			if f.Kind == agent.FieldChoice && len(vs) > 1 {
				return nil, nil, fmt.Errorf("%q takes one choice", label)
			}
			shown = nil
			for _, v := range vs {
				i := slices.IndexFunc(f.Choices, func(c agent.Choice) bool { return c.Value == v })
				if i < 0 {
					return nil, nil, fmt.Errorf("%q has no choice %q", label, v)
				}
				shown = append(shown, f.Choices[i].Title)
			}
			if f.Kind == agent.FieldChoice {
				content[f.Name] = vs[0]
				break
			}
			n := float64(len(vs))
			if (f.Min != nil && n < *f.Min) || (f.Max != nil && n > *f.Max) {
				return nil, nil, outOfBounds(label, "choices", f.Min, f.Max)
			}
			content[f.Name] = slices.Clone(vs)
		}
		qa = append(qa, sysmsg.QA{Field: label, Values: shown})
	}
	return content, qa, nil
}

// outOfBounds is the error of a value outside lo..hi: what says what
// is counted ("", "characters long", "choices").
func outOfBounds(label, what string, lo, hi *float64) error {
	n := func(x *float64) string { return strconv.FormatFloat(*x, 'g', -1, 64) }
	switch {
	case lo != nil && hi != nil:
		return fmt.Errorf("%q must be %s to %s %s", label, n(lo), n(hi), what)
	case lo != nil:
		return fmt.Errorf("%q must be at least %s %s", label, n(lo), what)
	default:
		return fmt.Errorf("%q must be at most %s %s", label, n(hi), what)
	}
}

func FieldLabel(f agent.Field) string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}
