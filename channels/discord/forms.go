package discord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// A form is a message with the question, a select menu for each choice,
// multi and yes-or-no field, and the buttons "Answer" and "Decline".
// "Answer" opens a modal with a text input for each text and number field
// (or, when the form has none, answers at once); the modal's submit, or
// the answer, arrives as Inbound.Form once every required field has a
// value and every number is one. A URL form is a link button and "Done"
// and "Decline". Selects live in the message rather than the modal:
// discordgo v0.29.0 has no label component, which a select in a modal
// needs. The adapter keeps each open form in memory (the picks made so
// far); after a restart its buttons answer that the question is no longer
// open. A click can come before the request that posted its form has
// returned (people see the message as soon as Discord has it): while a
// form is being posted in the click's channel, the click waits for that
// post, at most formWait, and is then handled as any other.

// Custom ids of a form's components.
const (
	formPrefix    = "acpgw:form:"
	formAnswerID  = formPrefix + "answer"
	formDeclineID = formPrefix + "decline"
	formDoneID    = formPrefix + "done"
	formFieldID   = formPrefix + "f:"     // + the field's index: a select
	formModalID   = formPrefix + "modal:" // + the form's message id
)

// Discord's limits of forms.
const (
	maxModalTitle  = 45
	maxModalInputs = 5
	maxInputLabel  = 45
	maxInputChars  = 4000
	maxFormSelects = 4 // five action rows, one of them the buttons
	maxOpenForms   = 1000
)

// formWait bounds how long a click on a form the adapter does not know
// waits for the forms being posted in its channel: well within the 3 s
// Discord gives to answer an interaction.
const formWait = 2 * time.Second

// openForm is a form shown and not answered yet.
type openForm struct {
	thread channels.ThreadRef
	form   channels.Form
	picks  map[int][]string // option ids picked in the selects, by field index
}

// forms holds the open forms by message id, and the forms being posted.
type forms struct {
	mu    sync.Mutex // guards the fields below
	open  map[string]*openForm
	order []string
	// posting holds, by channel id, a channel for each form being posted
	// there, closed when its post has returned.
	posting map[string][]chan struct{}
	// held counts the clicks waiting for a post (tests wait on it).
	held int
}

// startPost notes a form being posted in channel ch; the returned done
// says that its post has returned (after put, when it succeeded).
func (fs *forms) startPost(ch string) (done func()) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.posting == nil {
		fs.posting = map[string][]chan struct{}{}
	}
	c := make(chan struct{})
	fs.posting[ch] = append(fs.posting[ch], c)
	return func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		close(c)
		rest := slices.DeleteFunc(fs.posting[ch], func(o chan struct{}) bool { return o == c })
		if len(rest) == 0 {
			delete(fs.posting, ch)
		} else {
			fs.posting[ch] = rest
		}
	}
}

// await returns the open form of message id in channel ch, or nil. While
// forms are being posted in ch, it first waits for their posts to return,
// at most formWait, or until ctx ends: the click may be on one of them.
func (fs *forms) await(ctx context.Context, ch, id string) *openForm {
	fs.mu.Lock()
	f := fs.open[id]
	posts := slices.Clone(fs.posting[ch])
	if f != nil || len(posts) == 0 {
		fs.mu.Unlock()
		return f
	}
	fs.held++
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		fs.held--
		fs.mu.Unlock()
	}()
	timer := time.NewTimer(formWait)
	defer timer.Stop()
	for _, p := range posts {
		select {
		case <-p:
		case <-timer.C:
			return fs.get(id)
		case <-ctx.Done():
			return nil
		}
		if f := fs.get(id); f != nil {
			return f
		}
	}
	return fs.get(id)
}

// holding returns how many clicks wait for a form's post.
func (fs *forms) holding() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.held
}

func (fs *forms) put(id string, f *openForm) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.open == nil {
		fs.open = map[string]*openForm{}
	}
	if len(fs.order) >= maxOpenForms {
		delete(fs.open, fs.order[0])
		fs.order = fs.order[1:]
	}
	fs.open[id] = f
	fs.order = append(fs.order, id)
}

// get returns the open form of message id, or nil.
func (fs *forms) get(id string) *openForm {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.open[id]
}

func (fs *forms) forget(id string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.open, id)
}

// picked returns a copy of the picks made so far in form id.
func (fs *forms) picked(id string) map[int][]string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := map[int][]string{}
	if f := fs.open[id]; f != nil {
		for k, v := range f.picks {
			out[k] = v
		}
	}
	return out
}

// pick records the values picked in field i of form id.
func (fs *forms) pick(id string, i int, values []string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.open[id]
	if f == nil {
		return false
	}
	f.picks[i] = values
	return true
}

// inModal reports whether field k is asked in the modal (text and numbers)
// rather than as a select in the message.
func inModal(k channels.FieldKind) bool { return k == channels.FieldText || k == channels.FieldNumber }

// Form posts f in thread t and returns its message's handle; the answer
// arrives through Run's handler as Inbound.Form. It blocks on I/O. It
// returns an error when f has more fields than Discord can show: more
// than five text and number fields, more than four others, or a choice of
// more than 25 options.
func (a *Adapter) Form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	ch, err := channelOf(t)
	if err != nil {
		return channels.Handle{}, err
	}
	rows, err := a.formRows(f)
	if err != nil {
		return channels.Handle{}, channels.Permanent(err)
	}
	content := strings.TrimSpace(f.Text)
	if title := strings.TrimSpace(f.Title); title != "" {
		content = strings.TrimSpace("**" + title + "**\n" + content)
	}
	if content == "" {
		content = "…"
	}
	posted := a.forms.startPost(ch)
	defer posted()
	msg, err := a.s.ChannelMessageSendComplex(ch, &discordgo.MessageSend{
		Content:         clip(content, maxMessageChars),
		Components:      rows,
		AllowedMentions: noMentions(),
		Flags:           metaFlags,
	}, requestOptions(ctx)...)
	if err != nil {
		return channels.Handle{}, apiError("form", err)
	}
	a.forms.put(msg.ID, &openForm{thread: t, form: f, picks: map[int][]string{}})
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// formRows lays out f's selects and buttons.
func (a *Adapter) formRows(f channels.Form) ([]discordgo.MessageComponent, error) {
	decline := discordgo.Button{Label: "Decline", Style: discordgo.DangerButton, CustomID: formDeclineID}
	if f.URL != "" {
		return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Open", Style: discordgo.LinkButton, URL: f.URL},
			discordgo.Button{Label: "Done", Style: discordgo.PrimaryButton, CustomID: formDoneID},
			decline,
		}}}, nil
	}
	var rows []discordgo.MessageComponent
	inputs := 0
	for i, fd := range f.Fields {
		if inModal(fd.Kind) {
			inputs++
			continue
		}
		opts := fd.Options
		if fd.Kind == channels.FieldBool {
			opts = []channels.Option{{ID: "true", Label: "Yes"}, {ID: "false", Label: "No"}}
		}
		if len(opts) == 0 || len(opts) > maxButtons {
			return nil, fmt.Errorf("discord: form: field %q has %d options; a select holds 1 to %d", fd.ID, len(opts), maxButtons)
		}
		if len(rows) == maxFormSelects {
			return nil, fmt.Errorf("discord: form: more than %d choice fields", maxFormSelects)
		}
		defaults := map[string]bool{}
		for _, d := range strings.Split(fd.Default, ",") {
			defaults[strings.TrimSpace(d)] = fd.Default != ""
		}
		label := strings.TrimSpace(fd.Label)
		if label == "" {
			label = fd.ID
		}
		menu := discordgo.SelectMenu{MenuType: discordgo.StringSelectMenu, CustomID: formFieldID + strconv.Itoa(i), Placeholder: clip(label, 150)}
		if fd.Kind == channels.FieldMulti {
			zero := 0
			menu.MinValues, menu.MaxValues = &zero, len(opts)
		}
		for _, o := range opts {
			l := clip(strings.TrimSpace(o.Label), maxMenuLabel)
			if l == "" {
				l = clip(o.ID, maxMenuLabel)
			}
			menu.Options = append(menu.Options, discordgo.SelectMenuOption{Label: l, Value: a.buttons.customID(o.ID), Default: defaults[o.ID]})
		}
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{menu}})
	}
	if inputs > maxModalInputs {
		return nil, fmt.Errorf("discord: form: %d text and number fields; a modal holds %d", inputs, maxModalInputs)
	}
	return append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "Answer", Style: discordgo.PrimaryButton, CustomID: formAnswerID},
		decline,
	}}), nil
}

// deliverFormClick handles a click or pick on a form's message: a pick is
// remembered, "Answer" opens the modal (or answers), "Done" and "Decline"
// answer.
func (a *Adapter) deliverFormClick(r *running, i *discordgo.Interaction, c click) {
	ctx := r.ctx
	of := a.forms.await(ctx, c.channel, c.message)
	if of == nil {
		if ctx.Err() == nil {
			a.respond(ctx, i, "This question is no longer open.")
		}
		return
	}
	switch {
	case strings.HasPrefix(c.customID, formFieldID):
		n, err := strconv.Atoi(strings.TrimPrefix(c.customID, formFieldID))
		d, _ := i.Data.(discordgo.MessageComponentInteractionData)
		if err != nil || n < 0 || n >= len(of.form.Fields) {
			a.respond(ctx, i, "This question is no longer open.")
			return
		}
		values := make([]string, 0, len(d.Values))
		for _, v := range d.Values {
			values = append(values, a.buttons.option(v))
		}
		a.forms.pick(c.message, n, values)
		a.ackUpdate(ctx, i)
	case c.customID == formDeclineID:
		a.ackUpdate(ctx, i)
		a.deliverForm(r, i, c, of, channels.FormDecline, nil)
	case c.customID == formDoneID:
		a.ackUpdate(ctx, i)
		a.deliverForm(r, i, c, of, channels.FormAccept, map[string][]string{})
	case c.customID == formAnswerID:
		if modal, ok := a.modal(c.message, of.form); ok {
			err := a.s.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: modal}, requestOptions(ctx)...)
			if err != nil && ctx.Err() == nil {
				a.log.Warn("discord: cannot open a form's modal", "channel", c.channel, "err", err)
			}
			return
		}
		values, why := formValues(of.form, a.forms.picked(c.message), nil)
		if why != "" {
			a.respond(ctx, i, why)
			return
		}
		a.ackUpdate(ctx, i)
		a.deliverForm(r, i, c, of, channels.FormAccept, values)
	default:
		a.respond(ctx, i, "This question is no longer open.")
	}
}

// modal returns the modal of form f (message msg): a text input for each
// text and number field; ok is false when f has none.
func (a *Adapter) modal(msg string, f channels.Form) (*discordgo.InteractionResponseData, bool) {
	var rows []discordgo.MessageComponent
	for i, fd := range f.Fields {
		if !inModal(fd.Kind) {
			continue
		}
		label := strings.TrimSpace(fd.Label)
		if label == "" {
			label = fd.ID
		}
		in := discordgo.TextInput{
			CustomID:    formFieldID + strconv.Itoa(i),
			Label:       clip(label, maxInputLabel),
			Style:       discordgo.TextInputShort,
			Placeholder: clip(strings.TrimSpace(fd.Help), 100),
			Value:       clip(fd.Default, maxInputChars),
			Required:    fd.Required,
		}
		if fd.Multiline {
			in.Style = discordgo.TextInputParagraph
		}
		if fd.Kind == channels.FieldText {
			if fd.Min != nil && *fd.Min > 0 {
				in.MinLength = min(int(*fd.Min), maxInputChars)
			}
			if fd.Max != nil && *fd.Max >= 1 {
				in.MaxLength = min(int(*fd.Max), maxInputChars)
			}
		}
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{in}})
	}
	if len(rows) == 0 {
		return nil, false
	}
	title := strings.TrimSpace(f.Title)
	if title == "" {
		title = "Answer"
	}
	return &discordgo.InteractionResponseData{CustomID: formModalID + msg, Title: clip(title, maxModalTitle), Components: rows}, true
}

// readModal returns the message id of the form a modal submit answers and
// the text inputs' values by field index; ok is false for any other
// interaction.
func readModal(i *discordgo.Interaction) (msg string, values map[int]string, ok bool) {
	if i == nil || i.Type != discordgo.InteractionModalSubmit || i.ID == "" || i.Token == "" {
		return "", nil, false
	}
	d, isModal := i.Data.(discordgo.ModalSubmitInteractionData)
	if !isModal {
		return "", nil, false
	}
	msg, ok = strings.CutPrefix(d.CustomID, formModalID)
	if !ok || msg == "" {
		return "", nil, false
	}
	values = map[int]string{}
	for _, row := range d.Components {
		r, isRow := row.(*discordgo.ActionsRow)
		if !isRow {
			continue
		}
		for _, c := range r.Components {
			in, isInput := c.(*discordgo.TextInput)
			if !isInput {
				continue
			}
			n, err := strconv.Atoi(strings.TrimPrefix(in.CustomID, formFieldID))
			if err != nil || !strings.HasPrefix(in.CustomID, formFieldID) || n < 0 {
				continue
			}
			values[n] = in.Value
		}
	}
	return msg, values, true
}

// deliverModal handles a modal's submit: invalid values are answered
// privately (the form stays open), valid ones arrive as Inbound.Form.
func (a *Adapter) deliverModal(r *running, i *discordgo.Interaction, msg string, texts map[int]string) {
	ctx := r.ctx
	if ctx.Err() != nil {
		return
	}
	of := a.forms.get(msg)
	if of == nil {
		a.respond(ctx, i, "This question is no longer open.")
		return
	}
	values, why := formValues(of.form, a.forms.picked(msg), texts)
	if why != "" {
		a.respond(ctx, i, why)
		return
	}
	a.ackUpdate(ctx, i)
	c := click{channel: i.ChannelID, guild: i.GuildID, message: msg, author: author(i.User, i.Member)}
	a.deliverForm(r, i, c, of, channels.FormAccept, values)
}

// formValues returns the answer to form f: picks, the values picked in
// its selects, and texts, those of its modal, by field index; why says
// what is wrong ("" when nothing is).
func formValues(f channels.Form, picks map[int][]string, texts map[int]string) (map[string][]string, string) {
	values := map[string][]string{}
	var problems []string
	for i, fd := range f.Fields {
		label := strings.TrimSpace(fd.Label)
		if label == "" {
			label = fd.ID
		}
		if !inModal(fd.Kind) {
			picked := picks[i]
			if picked == nil && fd.Default != "" {
				for _, d := range strings.Split(fd.Default, ",") {
					picked = append(picked, strings.TrimSpace(d))
				}
			}
			if len(picked) == 0 {
				if fd.Required {
					problems = append(problems, fmt.Sprintf("“%s”: pick a value.", label))
				}
				continue
			}
			values[fd.ID] = picked
			continue
		}
		v := strings.TrimSpace(texts[i])
		if v == "" {
			if fd.Required {
				problems = append(problems, fmt.Sprintf("“%s”: a value is required.", label))
			}
			continue
		}
		switch fd.Kind {
		case channels.FieldNumber:
			n, err := strconv.ParseFloat(v, 64)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("“%s”: %q is not a number.", label, v))
				continue
			case fd.Min != nil && n < *fd.Min:
				problems = append(problems, fmt.Sprintf("“%s”: at least %g.", label, *fd.Min))
				continue
			case fd.Max != nil && n > *fd.Max:
				problems = append(problems, fmt.Sprintf("“%s”: at most %g.", label, *fd.Max))
				continue
			}
		case channels.FieldText:
			n := float64(utf8.RuneCountInString(v))
			if fd.Min != nil && n < *fd.Min {
				problems = append(problems, fmt.Sprintf("“%s”: at least %g characters.", label, *fd.Min))
				continue
			}
			if fd.Max != nil && n > *fd.Max {
				problems = append(problems, fmt.Sprintf("“%s”: at most %g characters.", label, *fd.Max))
				continue
			}
		}
		values[fd.ID] = []string{v}
	}
	if len(problems) > 0 {
		return nil, "Your answer was not sent: " + strings.Join(problems, " ")
	}
	return values, ""
}

// deliverForm hands a form's answer to the Run's handler.
func (a *Adapter) deliverForm(r *running, i *discordgo.Interaction, c click, of *openForm, act channels.FormAction, values map[string][]string) {
	if r.ctx.Err() != nil {
		return
	}
	r.h(r.ctx, channels.Inbound{
		Thread: of.thread,
		Author: c.author,
		ID:     channels.MessageID(i.ID),
		Space:  c.guild,
		Form:   &channels.FormAnswer{Form: channels.Handle{Thread: of.thread, ID: channels.MessageID(c.message)}, Action: act, Values: values},
		Reply:  func(ctx context.Context, text string) error { return a.reply(ctx, i, text) },
	})
}

// ackUpdate acknowledges a component or modal interaction without a
// message: the form's message is edited later.
func (a *Adapter) ackUpdate(ctx context.Context, i *discordgo.Interaction) {
	err := a.s.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}, requestOptions(ctx)...)
	if err != nil && ctx.Err() == nil && restCode(err) != discordgo.ErrCodeInteractionHasAlreadyBeenAcknowledged {
		a.log.Warn("discord: cannot acknowledge an interaction", "channel", i.ChannelID, "err", err)
	}
}

// respond answers an interaction with a message only its author sees.
func (a *Adapter) respond(ctx context.Context, i *discordgo.Interaction, text string) {
	err := a.s.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: clip(text, maxMessageChars), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()},
	}, requestOptions(ctx)...)
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		a.log.Warn("discord: cannot answer an interaction", "channel", i.ChannelID, "err", err)
	}
}
