package thread

import (
	"strconv"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// SingleChoice reports whether q is one choice, which shows as buttons
// (ShowQuestionChoice) where the chat has no forms.
func SingleChoice(q agent.Question) bool {
	return q.Mode == "form" && len(q.Fields) == 1 && q.Fields[0].Kind == agent.FieldChoice
}

// ShowQuestionChoice shows question id, a single choice (SingleChoice),
// as buttons: one per choice (ids id/0, id/1, …) and Decline (id/-);
// posted hears whether it was posted. Settle it with Lane.Resolve(id, …).
func (v View) ShowQuestionChoice(id string, q agent.Question, posted func(channels.Handle, error)) {
	f := q.Fields[0]
	opts := make([]channels.Option, 0, len(f.Choices)+1)
	for i, c := range f.Choices {
		opts = append(opts, channels.Option{ID: id + OptionSep + strconv.Itoa(i), Label: c.Title})
	}
	opts = append(opts, channels.Option{ID: id + OptionSep + DeclineOption, Label: sysmsg.Decline, Style: "danger"})
	v.Lane.Prompt(id, channels.Choice{Text: sysmsg.Asked{Message: q.Message}.Body(), Options: opts}, posted)
}
