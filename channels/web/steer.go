package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// The steering side of the web chat (channels/steer.go): the thread's
// session in its header, forms in the thread, the gateway's reactions on
// messages.

var (
	_ channels.SessionShower = (*Adapter)(nil)
	_ channels.Former        = (*Adapter)(nil)
	_ channels.Reactor       = (*Adapter)(nil)
)

// kindForm is the kind of a message that asks a form.
const kindForm = "form"

// sessionView is a thread's session as the API shows it (the page's
// header).
type sessionView struct {
	Agent  string `json:"agent,omitempty"`
	Model  string `json:"model,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Effort string `json:"effort,omitempty"`
	// ContextUsed and ContextSize are tokens, 0 unknown; ContextPercent
	// is used/size rounded, -1 unknown; ContextShare is it as shown
	// ("42%", "<1%"), as every other place shows it (sysmsg.Share).
	ContextUsed    int     `json:"contextUsed,omitempty"`
	ContextSize    int     `json:"contextSize,omitempty"`
	ContextPercent int     `json:"contextPercent"`
	ContextShare   string  `json:"contextShare,omitempty"`
	Cost           float64 `json:"cost,omitempty"`
	Currency       string  `json:"currency,omitempty"`
	// Settings are the config options people may change; Commands the
	// commands people can give here.
	Settings []settingView `json:"settings"`
	Commands []commandView `json:"commands"`
}

// settingView is one config option of a session.
type settingView struct {
	ID       string   `json:"id"`
	Category string   `json:"category,omitempty"`
	Name     string   `json:"name"`
	Current  string   `json:"current"`
	Values   []option `json:"values"`
	// Command is the command the page sends to pick a value: "model",
	// "mode", "effort" (with the value as its argument) or "set" (with
	// "ID VALUE").
	Command string `json:"command"`
}

// commandView is one command of the palette.
type commandView struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Arg         string `json:"arg,omitempty"`
	Agent       bool   `json:"agent,omitempty"`
}

// sessionViewOf returns s as the API shows it.
func sessionViewOf(s channels.SessionInfo) sessionView {
	v := sessionView{
		Agent: s.Agent, Model: s.Model, Mode: s.Mode, Effort: s.Effort,
		ContextUsed: s.ContextUsed, ContextSize: s.ContextSize, ContextPercent: -1,
		Currency: s.Currency, Settings: []settingView{}, Commands: []commandView{},
	}
	if s.ContextSize > 0 && s.ContextUsed >= 0 {
		v.ContextPercent = int(sysmsg.SharePercent(int64(s.ContextUsed), int64(s.ContextSize)))
		v.ContextShare = sysmsg.Share(int64(s.ContextUsed), int64(s.ContextSize))
	}
	if s.Currency != "" && !math.IsNaN(s.Cost) && !math.IsInf(s.Cost, 0) {
		v.Cost = s.Cost
	}
	for _, st := range s.Settings {
		sv := settingView{ID: st.ID, Category: st.Category, Name: st.Name, Current: st.Current, Command: commandFor(st.Category)}
		if sv.Name == "" {
			sv.Name = st.ID
		}
		for _, o := range st.Values {
			label := o.Label
			if label == "" {
				label = o.ID
			}
			sv.Values = append(sv.Values, option{ID: o.ID, Label: label})
		}
		v.Settings = append(v.Settings, sv)
	}
	for _, c := range s.Commands {
		cv := commandView{Name: c.Name, Description: c.Description, Agent: c.Agent}
		if c.Arg != nil {
			cv.Arg = c.Arg.Name
		}
		v.Commands = append(v.Commands, cv)
	}
	return v
}

// commandFor returns the command that sets a config option of category:
// the category's own command, or "set" for any other.
func commandFor(category string) string {
	switch category {
	case "model":
		return "model"
	case "mode":
		return "mode"
	case "thought_level", "effort":
		return "effort"
	}
	return "set"
}

// ShowSession records what thread t's session is and sends it to the
// thread's pages (the header: agent, model, mode, context, and a menu of
// each setting). It does no I/O and never blocks; threads of other
// platforms and unknown threads are ignored.
func (a *Adapter) ShowSession(t channels.ThreadRef, s channels.SessionInfo) {
	if t.Platform != Platform || t.Channel != Channel {
		return
	}
	v := sessionViewOf(s)
	a.st.setSession(t.Thread, &v)
}

// formView is a form as the API shows it (a message's "form").
type formView struct {
	Title  string      `json:"title,omitempty"`
	URL    string      `json:"url,omitempty"`
	Fields []fieldView `json:"fields,omitempty"`
}

// fieldView is one field of a form.
type fieldView struct {
	ID        string   `json:"id"`
	Label     string   `json:"label"`
	Help      string   `json:"help,omitempty"`
	Kind      string   `json:"kind"` // text, number, choice, multi, bool
	Required  bool     `json:"required,omitempty"`
	Options   []option `json:"options,omitempty"`
	Default   string   `json:"default,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	Multiline bool     `json:"multiline,omitempty"`
}

var fieldKinds = map[channels.FieldKind]string{
	channels.FieldText:   "text",
	channels.FieldNumber: "number",
	channels.FieldChoice: "choice",
	channels.FieldMulti:  "multi",
	channels.FieldBool:   "bool",
}

// urlPattern is what a URL form may link to.
var urlPattern = regexp.MustCompile(`^https?://[^\s]+$`)

// checkForm returns f as the API shows it, or why it cannot be shown.
func checkForm(f channels.Form) (*formView, error) {
	if f.Text == "" && f.Title == "" {
		return nil, errors.New("the form has neither title nor text")
	}
	if !utf8.ValidString(f.Title) || !utf8.ValidString(f.Text) || !utf8.ValidString(f.URL) {
		return nil, errors.New("the form is not valid UTF-8")
	}
	v := &formView{Title: f.Title, URL: f.URL}
	if f.URL != "" {
		if !urlPattern.MatchString(f.URL) {
			return nil, fmt.Errorf("the form's url %q is not an http(s) URL", f.URL)
		}
		if len(f.Fields) > 0 {
			return nil, errors.New("a URL form has no fields")
		}
		return v, nil
	}
	if len(f.Fields) == 0 {
		return nil, errors.New("the form has no fields")
	}
	seen := make(map[string]bool)
	for _, fd := range f.Fields {
		kind, ok := fieldKinds[fd.Kind]
		switch {
		case fd.ID == "" || !utf8.ValidString(fd.ID):
			return nil, errors.New("a field has no id")
		case seen[fd.ID]:
			return nil, fmt.Errorf("duplicate field id %q", fd.ID)
		case !ok:
			return nil, fmt.Errorf("field %q has unknown kind %d", fd.ID, fd.Kind)
		case (kind == "choice" || kind == "multi") && len(fd.Options) == 0:
			return nil, fmt.Errorf("field %q has no options", fd.ID)
		}
		seen[fd.ID] = true
		label := fd.Label
		if label == "" {
			label = fd.ID
		}
		fv := fieldView{ID: fd.ID, Label: label, Help: fd.Help, Kind: kind, Required: fd.Required, Default: fd.Default, Min: fd.Min, Max: fd.Max, Multiline: fd.Multiline}
		for _, o := range fd.Options {
			l := o.Label
			if l == "" {
				l = o.ID
			}
			fv.Options = append(fv.Options, option{ID: o.ID, Label: l})
		}
		v.Fields = append(v.Fields, fv)
	}
	return v, nil
}

// Form shows f in thread t as a form (or, with a URL, a link with Done
// and Decline); the answer arrives through Run's handler as
// Inbound.Form, and Edit of the returned handle folds it to a line. It
// does no network I/O and fails like Post, and for a form with no fields
// (and no URL), a field without id or options, or a URL that is not
// http(s).
func (a *Adapter) Form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	if err := a.check(ctx, "form", t); err != nil {
		return channels.Handle{}, err
	}
	fv, err := checkForm(f)
	if err != nil {
		return channels.Handle{}, permanent(fmt.Errorf("web: form in %s: %w", t, err))
	}
	text := f.Text
	if text == "" {
		text = f.Title
	}
	msg, err := a.st.addMessage(t.Thread, message{Role: roleAssistant, Author: authorAgent, Kind: kindForm, Text: text, Form: fv})
	if err != nil {
		return channels.Handle{}, permanent(fmt.Errorf("web: form in %s: %w", t, err))
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// checkAnswer checks a form's answer against the form: known fields,
// required ones given, numbers within bounds, options offered. It
// returns the values to deliver (empty values left out).
func checkAnswer(f *formView, action channels.FormAction, values map[string][]string) (map[string][]string, error) {
	switch action {
	case channels.FormDecline, channels.FormCancel:
		return nil, nil
	case channels.FormAccept:
	default:
		return nil, fmt.Errorf(`"action" must be accept, decline or cancel, not %q`, action)
	}
	if f.URL != "" {
		return nil, nil // Done: nothing to fill in
	}
	out := make(map[string][]string)
	known := make(map[string]bool)
	for _, fd := range f.Fields {
		known[fd.ID] = true
		var vals []string
		for _, v := range values[fd.ID] {
			if v != "" {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			if fd.Required {
				return nil, fmt.Errorf("%q is required", fd.Label)
			}
			continue
		}
		if fd.Kind != "multi" && len(vals) > 1 {
			return nil, fmt.Errorf("%q takes one value", fd.Label)
		}
		for _, v := range vals {
			if err := checkValue(fd, v); err != nil {
				return nil, err
			}
		}
		out[fd.ID] = vals
	}
	for id := range values {
		if !known[id] {
			return nil, fmt.Errorf("the form has no field %q", id)
		}
	}
	return out, nil
}

func checkValue(fd fieldView, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%q is not valid UTF-8", fd.Label)
	}
	switch fd.Kind {
	case "number":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return fmt.Errorf("%q must be a number, not %q", fd.Label, v)
		}
		if fd.Min != nil && n < *fd.Min || fd.Max != nil && n > *fd.Max {
			return fmt.Errorf("%q must be between %s and %s", fd.Label, bound(fd.Min, "-∞"), bound(fd.Max, "∞"))
		}
	case "text":
		n := float64(utf8.RuneCountInString(v))
		if fd.Min != nil && n < *fd.Min || fd.Max != nil && n > *fd.Max {
			return fmt.Errorf("%q must have between %s and %s characters", fd.Label, bound(fd.Min, "0"), bound(fd.Max, "any number of"))
		}
	case "bool":
		if v != "true" && v != "false" {
			return fmt.Errorf("%q must be true or false", fd.Label)
		}
	case "choice", "multi":
		if !offers(fd.Options, v) {
			return fmt.Errorf("%q has no option %q", fd.Label, v)
		}
	}
	return nil
}

func bound(b *float64, none string) string {
	if b == nil {
		return none
	}
	return strconv.FormatFloat(*b, 'f', -1, 64)
}

// React adds emoji to the gateway's reactions on message h (any message
// of the thread, a person's too) and shows it on the page. It does no
// network I/O; it fails for an ended ctx, a thread of another platform,
// an empty emoji, and with channels.ErrMessageGone for a message that no
// longer exists.
func (a *Adapter) React(ctx context.Context, h channels.Handle, emoji string) error {
	return a.react(ctx, h, emoji, true)
}

// Unreact removes emoji from the gateway's reactions on message h; it
// fails like React.
func (a *Adapter) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	return a.react(ctx, h, emoji, false)
}

func (a *Adapter) react(ctx context.Context, h channels.Handle, emoji string, add bool) error {
	if err := a.check(ctx, "react", h.Thread); err != nil {
		return err
	}
	if emoji == "" || !utf8.ValidString(emoji) || utf8.RuneCountInString(emoji) > 16 {
		return channels.Permanent(fmt.Errorf("web: react in %s: %q is not an emoji", h.Thread, emoji))
	}
	if err := a.st.react(h.Thread.Thread, string(h.ID), emoji, add); err != nil {
		return messageGone(fmt.Sprintf("web: react to %q in %s", h.ID, h.Thread), err)
	}
	return nil
}

// withReaction returns rs with emoji added or removed, in a new slice.
func withReaction(rs []string, emoji string, add bool) ([]string, bool) {
	i := slices.Index(rs, emoji)
	switch {
	case add && i < 0:
		return append(slices.Clip(rs), emoji), true
	case !add && i >= 0:
		return slices.Delete(slices.Clone(rs), i, i+1), true
	}
	return rs, false
}
