package channeltest

import (
	"context"
	"fmt"
	"slices"

	"github.com/acpgw/gateway/channels"
)

// form implements channels.Former. The form becomes a message of kind
// channels.KindPermission whose Text is the form's text and whose
// Options are its field ids (a url form's: "url"); an edit folds it.
func (r *Recorder) form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := []string{}
	for _, fd := range f.Fields {
		ids = append(ids, fd.ID)
	}
	if f.URL != "" {
		ids = append(ids, "url")
	}
	text := f.Text
	if f.URL != "" {
		text += "\n" + f.URL
	}
	op := Op{Op: "form", Kind: channels.KindPermission, Text: text, Options: ids}
	err := r.checkLocked(ctx, InjectForm, t)
	if err == nil {
		err = r.checkForm(f)
		if err != nil {
			err = channels.Permanent(fmt.Errorf("channeltest: form in %s: %w", t, err))
		}
	}
	if err != nil {
		r.logLocked(t, op, err)
		return channels.Handle{}, err
	}
	msg := r.addLocked(t, channels.KindPermission, "", text, ids)
	ff := f
	ff.Fields = slices.Clone(f.Fields)
	msg.Form = &ff
	op.Msg = msg.ID
	r.logLocked(t, op, nil)
	return channels.Handle{Thread: t, ID: msg.ID}, nil
}

// checkForm rejects what a real platform would reject: no text, no
// fields and no url, fields without ids or twice, choices without
// options.
func (r *Recorder) checkForm(f channels.Form) error {
	if err := r.checkText(f.Text); err != nil {
		return err
	}
	if len(f.Fields) == 0 && f.URL == "" {
		return fmt.Errorf("a form with neither fields nor a url")
	}
	seen := map[string]bool{}
	for _, fd := range f.Fields {
		if fd.ID == "" || seen[fd.ID] {
			return fmt.Errorf("field id %q empty or twice", fd.ID)
		}
		seen[fd.ID] = true
		if (fd.Kind == channels.FieldChoice || fd.Kind == channels.FieldMulti) && len(fd.Options) == 0 {
			return fmt.Errorf("choice field %q without options", fd.ID)
		}
	}
	return nil
}

// AnswerForm delivers author's answer to form h through Deliver, as
// Inbound.Form with a private Reply. It fails without delivering when h
// is no form in h.Thread still showing its fields (an edit folds it), a
// value names no field of the form, or a choice names no option of its
// field, as a real platform would offer no such input.
func (r *Recorder) AnswerForm(ctx context.Context, author channels.Author, h channels.Handle, action channels.FormAction, values map[string][]string) error {
	m, ok := r.Message(h.ID)
	if !ok || m.Thread != h.Thread || m.Form == nil || m.Options == nil {
		return fmt.Errorf("answer form %s: no open form in %s", h.ID, h.Thread)
	}
	for id, vs := range values {
		i := slices.IndexFunc(m.Form.Fields, func(f channels.Field) bool { return f.ID == id })
		if i < 0 {
			return fmt.Errorf("answer form %s: no field %q", h.ID, id)
		}
		fd := m.Form.Fields[i]
		if fd.Kind != channels.FieldChoice && fd.Kind != channels.FieldMulti {
			continue
		}
		for _, v := range vs {
			if !slices.ContainsFunc(fd.Options, func(o channels.Option) bool { return o.ID == v }) {
				return fmt.Errorf("answer form %s: field %q has no option %q", h.ID, id, v)
			}
		}
	}
	return r.Deliver(ctx, channels.Inbound{
		Thread: h.Thread,
		Author: author,
		Form:   &channels.FormAnswer{Form: h, Action: action, Values: values},
		Reply:  r.ReplyFunc(h.Thread),
	})
}
