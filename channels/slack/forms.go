package slack

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/acpgw/gateway/channels"
)

// Forms (channels.Former): a form is a message in the thread with its
// question and buttons; "Answer" opens a modal with the fields
// (views.open with the click's trigger_id), whose submission
// (view_submission) is the answer and whose closing (view_closed) is a
// cancel. A URL form has a link button, "Done" and "Decline".

// The values of a form message's buttons.
const (
	formAnswer  = "form:answer"
	formDecline = "form:decline"
	formDone    = "form:done"
	formLink    = "form:link" // the action_id of a URL form's link button
)

// Limits of forms.
const (
	maxOpenForms    = 1000 // forms remembered until they are folded
	maxModalTitle   = 24   // plain_text title of a modal
	maxModalBlocks  = 100
	maxInputLabel   = 2000
	maxInputHint    = 2000
	maxTextInputLen = 3000 // max_length of a plain_text_input
	formCallbackID  = "gateway-form"
)

// openForm is a form shown and not folded yet.
type openForm struct {
	h channels.Handle
	f channels.Form
}

var _ channels.Former = (*Adapter)(nil)

// Form posts f in thread t: its title and text, and "Answer" and
// "Decline" buttons (a link button, "Done" and "Decline" for a URL form).
// The answer comes back through Run's handler as Inbound.Form: accept
// with the modal's values (or none for a URL form's Done), decline, or
// cancel when the modal is closed. It blocks on I/O and returns a
// *channels.RateLimitError when Slack answers 429.
func (a *Adapter) Form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	if err := a.pace(t.Channel, t.Thread, time.Now()); err != nil {
		return channels.Handle{}, err
	}
	text := Mrkdwn(f.Text)
	if f.Title != "" {
		text = "*" + escapeMrkdwnLine(f.Title) + "*\n" + text
	}
	var blocks []slack.Block
	for _, chunk := range chunks(text, maxSectionChars) {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, chunk, false, false), nil, nil))
	}
	label := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
	}
	var buttons []slack.BlockElement
	if f.URL != "" {
		buttons = append(buttons,
			slack.NewButtonBlockElement(formLink, "", label("Open link")).WithURL(f.URL).WithStyle(slack.StylePrimary),
			slack.NewButtonBlockElement(formDone, formDone, label("Done")))
	} else {
		buttons = append(buttons, slack.NewButtonBlockElement(formAnswer, formAnswer, label("Answer")).WithStyle(slack.StylePrimary))
	}
	buttons = append(buttons, slack.NewButtonBlockElement(formDecline, formDecline, label("Decline")))
	blocks = append(blocks, slack.NewActionBlock("form", buttons...))
	h, err := a.postBlocks(ctx, t, firstNonEmpty(text, "A question"), blocks, "form")
	if err != nil {
		return channels.Handle{}, err
	}
	a.mu.Lock()
	if a.forms == nil {
		a.forms = newLRU[*openForm](maxOpenForms)
	}
	a.forms.put(t.Channel+"/"+string(h.ID), &openForm{h: h, f: f})
	a.mu.Unlock()
	a.promptOpened(ctx, h)
	return h, nil
}

// escapeMrkdwnLine makes s safe as one line of mrkdwn.
func escapeMrkdwnLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "*", "").Replace(s)
}

// form returns the open form of message channel/ts.
func (a *Adapter) form(channel, ts string) (*openForm, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.forms == nil {
		return nil, false
	}
	return a.forms.get(channel + "/" + ts)
}

// formFolded forgets the form of message h (the gateway edited it).
func (a *Adapter) formFolded(h channels.Handle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.forms != nil {
		a.forms.remove(h.Thread.Channel + "/" + string(h.ID))
	}
}

// formClick handles a click on a form message's button: "Answer" opens
// the modal and delivers nothing; "Decline" and "Done" are answers. It
// reports false for clicks on other messages.
func (a *Adapter) formClick(ctx context.Context, c click, in channels.Inbound) (channels.Inbound, bool, bool) {
	switch c.OptionID {
	case formAnswer, formDecline, formDone, formLink:
	default:
		return channels.Inbound{}, false, false
	}
	if c.OptionID == formLink {
		return channels.Inbound{}, false, true // the browser opens the link
	}
	of, ok := a.form(c.Channel, c.MessageTS)
	if !ok {
		if in.Reply != nil {
			if err := in.Reply(ctx, "This question is no longer open."); err != nil {
				a.log.Debug("slack: cannot tell about a closed form", "err", err)
			}
		}
		return channels.Inbound{}, false, true
	}
	in.Choice = nil
	switch c.OptionID {
	case formDecline:
		in.Form = &channels.FormAnswer{Form: of.h, Action: channels.FormDecline}
		return in, true, true
	case formDone:
		in.Form = &channels.FormAnswer{Form: of.h, Action: channels.FormAccept, Values: map[string][]string{}}
		return in, true, true
	}
	if of.f.URL != "" {
		return channels.Inbound{}, false, true
	}
	view := modal(of)
	if _, err := a.api.OpenViewContext(ctx, c.TriggerID, view); err != nil {
		a.log.Warn("slack: cannot open a form's modal", "thread", of.h.Thread, "err", a.apiErr("views.open", err))
		if in.Reply != nil {
			if err := in.Reply(ctx, "The form could not be opened; try the button again."); err != nil {
				a.log.Debug("slack: cannot tell about a form", "err", err)
			}
		}
	}
	return channels.Inbound{}, false, true
}

// modal returns the modal of form of: its text, then one input block per
// field (block id "field-N", action id "value").
func modal(of *openForm) slack.ModalViewRequest {
	f := of.f
	text := func(s string, n int) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, truncate(s, n), true, false)
	}
	var blocks []slack.Block
	if f.Text != "" {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, truncate(Mrkdwn(f.Text), maxSectionChars), false, false), nil, nil))
	}
	for i, fd := range f.Fields {
		if len(blocks) == maxModalBlocks {
			break
		}
		var hint *slack.TextBlockObject
		if fd.Help != "" {
			hint = text(fd.Help, maxInputHint)
		}
		ib := slack.NewInputBlock(fieldBlock(i), text(firstNonEmpty(fd.Label, fd.ID, "Answer"), maxInputLabel), hint, fieldElement(fd))
		ib.Optional = !fd.Required || fd.Kind == channels.FieldBool
		blocks = append(blocks, ib)
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           text(firstNonEmpty(f.Title, "Question"), maxModalTitle),
		Blocks:          slack.Blocks{BlockSet: blocks},
		Submit:          text("Submit", 24),
		Close:           text("Cancel", 24),
		PrivateMetadata: of.h.Thread.Channel + "/" + string(of.h.ID),
		CallbackID:      formCallbackID,
		NotifyOnClose:   true,
	}
}

// fieldBlock is the block id of field i.
func fieldBlock(i int) string { return "field-" + strconv.Itoa(i) }

// fieldAction is the action id of every field's element.
const fieldAction = "value"

// fieldElement returns the input element of fd.
func fieldElement(fd channels.Field) slack.BlockElement {
	opt := func(o channels.Option) *slack.OptionBlockObject {
		return slack.NewOptionBlockObject(truncate(o.ID, maxOptionValue),
			slack.NewTextBlockObject(slack.PlainTextType, truncate(firstNonEmpty(o.Label, o.ID), maxOptionText), true, false), nil)
	}
	options := func() []*slack.OptionBlockObject {
		var out []*slack.OptionBlockObject
		for _, o := range fd.Options[:min(len(fd.Options), maxSelectOptions)] {
			out = append(out, opt(o))
		}
		return out
	}
	switch fd.Kind {
	case channels.FieldNumber:
		e := slack.NewNumberInputBlockElement(nil, fieldAction, true)
		e.InitialValue = fd.Default
		if fd.Min != nil {
			e.MinValue = strconv.FormatFloat(*fd.Min, 'f', -1, 64)
		}
		if fd.Max != nil {
			e.MaxValue = strconv.FormatFloat(*fd.Max, 'f', -1, 64)
		}
		return e
	case channels.FieldChoice:
		e := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, fieldAction, options()...)
		for _, o := range e.Options {
			if fd.Default != "" && o.Value == fd.Default {
				e.InitialOption = o
			}
		}
		return e
	case channels.FieldMulti:
		e := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, nil, fieldAction, options()...)
		defaults := strings.Split(fd.Default, ",")
		for _, o := range e.Options {
			for _, d := range defaults {
				if d != "" && o.Value == d {
					e.InitialOptions = append(e.InitialOptions, o)
				}
			}
		}
		return e
	case channels.FieldBool:
		yes := opt(channels.Option{ID: "true", Label: firstNonEmpty(fd.Label, "Yes")})
		e := slack.NewCheckboxGroupsBlockElement(fieldAction, yes)
		if fd.Default == "true" {
			e.InitialOptions = []*slack.OptionBlockObject{yes}
		}
		return e
	}
	e := slack.NewPlainTextInputBlockElement(nil, fieldAction)
	e.Multiline = fd.Multiline
	e.InitialValue = fd.Default
	if fd.Min != nil && *fd.Min > 0 {
		e.MinLength = min(int(*fd.Min), maxTextInputLen)
	}
	e.MaxLength = maxTextInputLen
	if fd.Max != nil && *fd.Max >= 1 {
		e.MaxLength = min(int(*fd.Max), maxTextInputLen)
	}
	return e
}

// formValues returns the answer to of in the state of a submitted modal,
// and the errors to show in the modal by block id (nil when none).
func formValues(of *openForm, state map[string]map[string]stateValue) (map[string][]string, map[string]string) {
	values := map[string][]string{}
	errs := map[string]string{}
	for i, fd := range of.f.Fields {
		block := fieldBlock(i)
		sv := state[block][fieldAction]
		var got []string
		switch fd.Kind {
		case channels.FieldChoice:
			if sv.SelectedOption != nil && sv.SelectedOption.Value != "" {
				got = []string{string(sv.SelectedOption.Value)}
			}
		case channels.FieldMulti:
			for _, o := range sv.SelectedOptions {
				if o.Value != "" {
					got = append(got, string(o.Value))
				}
			}
		case channels.FieldBool:
			v := "false"
			for _, o := range sv.SelectedOptions {
				if o.Value == "true" {
					v = "true"
				}
			}
			got = []string{v}
		default:
			if v := strings.TrimSpace(string(sv.Value)); v != "" {
				got = []string{v}
			}
		}
		if msg := fieldError(fd, got); msg != "" {
			errs[block] = msg
			continue
		}
		if got != nil {
			values[fd.ID] = got
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return values, nil
}

// fieldError says what is wrong with the values got of field fd, "" when
// nothing is.
func fieldError(fd channels.Field, got []string) string {
	if len(got) == 0 {
		if fd.Required {
			return "Please answer this."
		}
		return ""
	}
	bound := func(v float64, what string) string {
		switch {
		case fd.Min != nil && v < *fd.Min:
			return what + " must be at least " + strconv.FormatFloat(*fd.Min, 'f', -1, 64) + "."
		case fd.Max != nil && v > *fd.Max:
			return what + " must be at most " + strconv.FormatFloat(*fd.Max, 'f', -1, 64) + "."
		}
		return ""
	}
	switch fd.Kind {
	case channels.FieldNumber:
		v, err := strconv.ParseFloat(got[0], 64)
		if err != nil {
			return "Please write a number."
		}
		return bound(v, "The number")
	case channels.FieldText:
		return bound(float64(utf8.RuneCountInString(got[0])), "The length")
	case channels.FieldChoice, channels.FieldMulti:
		for _, g := range got {
			known := false
			for _, o := range fd.Options {
				known = known || truncate(o.ID, maxOptionValue) == g
			}
			if !known {
				return "Please pick one of the options."
			}
		}
	}
	return ""
}

// viewAck returns the payload to acknowledge an interactive envelope
// with: for the submission of a form's modal with a wrong value, the
// errors to show in the modal; nil otherwise (a plain acknowledgement,
// which closes a submitted modal).
func (a *Adapter) viewAck(payload []byte) any {
	v, err := decodeView(payload)
	if err != nil || v.Type != "view_submission" {
		return nil
	}
	of, ok := a.form(v.Channel, v.MessageTS)
	if !ok {
		return nil
	}
	if _, errs := formValues(of, v.State); errs != nil {
		return map[string]any{"response_action": "errors", "errors": errs}
	}
	return nil
}

// fromView builds the Inbound of a form's modal submitted (with valid
// values) or closed. A view delivered once is not delivered again.
func (a *Adapter) fromView(ctx context.Context, v view) (channels.Inbound, bool) {
	of, ok := a.form(v.Channel, v.MessageTS)
	if !ok {
		a.log.Info("slack: an answer to a form no longer open", "channel", v.Channel, "form", v.MessageTS)
		return channels.Inbound{}, false
	}
	answer := &channels.FormAnswer{Form: of.h, Action: channels.FormCancel}
	if v.Type == "view_submission" {
		values, errs := formValues(of, v.State)
		if errs != nil {
			return channels.Inbound{}, false // shown in the modal
		}
		answer.Action, answer.Values = channels.FormAccept, values
	}
	// A submission that passed closes its modal: only a redelivered
	// envelope comes again.
	if !a.seen.first(a.seen.clicks, "view/"+v.Type+"/"+v.ViewID) {
		return channels.Inbound{}, false
	}
	me, _ := a.capabilities()
	ref := of.h.Thread
	return channels.Inbound{
		Thread: ref,
		Author: channels.Author{ID: v.UserID, Name: a.users.name(ctx, v.UserID, v.UserName), Roles: a.users.roles(ctx, v.UserID)},
		Form:   answer,
		Space:  firstNonEmpty(v.Team, me.TeamID),
		Reply:  a.ephemeral(ref.Channel, ref.Thread, v.UserID),
	}, true
}
