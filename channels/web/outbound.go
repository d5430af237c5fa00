package web

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// Post appends m to thread t as an assistant message and publishes it to
// the thread's live streams. It does no network I/O (the browsers pull);
// it fails when ctx has ended, when t is not a thread of this adapter, and
// when the text is empty or not valid UTF-8.
func (a *Adapter) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	if err := a.check(ctx, "post", t); err != nil {
		return channels.Handle{}, err
	}
	if err := checkText(m.Text); err != nil {
		return channels.Handle{}, permanent(fmt.Errorf("web: post in %s: %w", t, err))
	}
	msg, err := a.st.addMessage(t.Thread, message{
		Role: roleAssistant, Author: authorAgent, Kind: kindOf(m.Kind), Key: m.Key, Text: channels.TrimLead(m.Text),
	})
	if err != nil {
		return channels.Handle{}, permanent(fmt.Errorf("web: post in %s: %w", t, err))
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// Edit replaces the kind and text of a message Post or Prompt created and
// publishes the change; a prompt loses its buttons. It returns an error
// wrapping channels.ErrMessageGone when the message or its thread no longer
// exists (forgotten by the memory bounds) or is not the gateway's.
func (a *Adapter) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	if err := a.check(ctx, "edit", h.Thread); err != nil {
		return err
	}
	if err := checkText(m.Text); err != nil {
		return fmt.Errorf("web: edit %q in %s: %w", h.ID, h.Thread, err)
	}
	err := a.st.editMessage(h.Thread.Thread, string(h.ID), kindOf(m.Kind), m.Key, channels.TrimLead(m.Text))
	if err != nil {
		return messageGone(fmt.Sprintf("web: edit %q in %s", h.ID, h.Thread), err)
	}
	return nil
}

// SetTitle renames thread t to the first line of title, as plain text
// (the agent's session title). It does no network I/O and fails for an
// ended ctx, an unknown thread or an empty title.
func (a *Adapter) SetTitle(ctx context.Context, t channels.ThreadRef, title string) error {
	if err := a.check(ctx, "set title", t); err != nil {
		return err
	}
	if _, err := a.st.setTitle(t.Thread, title); err != nil {
		return fmt.Errorf("web: set title in %s: %w", t, err)
	}
	return nil
}

// ToolDetail keeps what tool call key of thread t showed, for its line
// (which opens on click to show it). It does no I/O and never blocks;
// threads of other platforms and unknown threads are ignored.
func (a *Adapter) ToolDetail(t channels.ThreadRef, key string, d channels.ToolDetail) {
	if t.Platform != Platform || t.Channel != Channel {
		return
	}
	a.st.setToolDetail(t.Thread, key, d)
}

// ShowAgent records the agent thread t uses, for the thread list. It
// does no I/O and never blocks; threads of other platforms and unknown
// threads are ignored.
func (a *Adapter) ShowAgent(t channels.ThreadRef, agent string) {
	if t.Platform != Platform || t.Channel != Channel || !utf8.ValidString(agent) {
		return
	}
	a.st.setAgent(t.Thread, agent)
}

// Typing shows the typing indicator (and the page's Stop button) in t until
// StopTyping. It does no network I/O and fails only for an ended ctx or an
// unknown thread.
func (a *Adapter) Typing(ctx context.Context, t channels.ThreadRef) error {
	return a.setTyping(ctx, t, true)
}

// StopTyping clears the typing indicator in t. It does no network I/O and
// fails only for an ended ctx or an unknown thread.
func (a *Adapter) StopTyping(ctx context.Context, t channels.ThreadRef) error {
	return a.setTyping(ctx, t, false)
}

func (a *Adapter) setTyping(ctx context.Context, t channels.ThreadRef, on bool) error {
	if err := a.check(ctx, "typing", t); err != nil {
		return err
	}
	if err := a.st.setTyping(t.Thread, on); err != nil {
		return fmt.Errorf("web: typing in %s: %w", t, err)
	}
	return nil
}

// Prompt appends c to thread t as an assistant message of kind permission
// with one button per option. A click arrives through Run's handler as
// Inbound.Choice; Edit of the returned handle removes the buttons. It fails
// like Post, and when c has no options or an option id is empty or
// repeated.
func (a *Adapter) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	if err := a.check(ctx, "prompt", t); err != nil {
		return channels.Handle{}, err
	}
	opts, err := checkChoice(c)
	if err != nil {
		return channels.Handle{}, permanent(fmt.Errorf("web: prompt in %s: %w", t, err))
	}
	msg, err := a.st.addMessage(t.Thread, message{
		Role: roleAssistant, Author: authorAgent, Kind: string(channels.KindPermission), Text: c.Text, Options: opts,
	})
	if err != nil {
		return channels.Handle{}, permanent(fmt.Errorf("web: prompt in %s: %w", t, err))
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// check rejects calls with an ended context and threads of other
// platforms.
func (a *Adapter) check(ctx context.Context, op string, t channels.ThreadRef) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("web: %s in %s: %w", op, t, err)
	}
	if t.Platform != Platform || t.Channel != Channel {
		return channels.Permanent(fmt.Errorf("web: %s in %s: not a thread of the web chat (want %s/%s/…)", op, t, Platform, Channel))
	}
	return nil
}

// ref returns the ThreadRef of thread id.
func ref(id string) channels.ThreadRef {
	return channels.ThreadRef{Platform: Platform, Channel: Channel, Thread: id}
}

// kindOf returns the kind as the API shows it; an unset kind is text.
func kindOf(k channels.Kind) string {
	if k == "" {
		return string(channels.KindText)
	}
	return string(k)
}

func checkText(s string) error {
	switch {
	case s == "":
		return errors.New("text is empty")
	case !utf8.ValidString(s):
		return errors.New("text is not valid UTF-8")
	}
	return nil
}

func checkChoice(c channels.Choice) ([]option, error) {
	if err := checkText(c.Text); err != nil {
		return nil, err
	}
	if len(c.Options) == 0 {
		return nil, errors.New("no options")
	}
	opts := make([]option, 0, len(c.Options))
	seen := make(map[string]bool, len(c.Options))
	for _, o := range c.Options {
		switch {
		case o.ID == "":
			return nil, errors.New("option with an empty id")
		case seen[o.ID]:
			return nil, fmt.Errorf("duplicate option id %q", o.ID)
		case !utf8.ValidString(o.ID) || !utf8.ValidString(o.Label):
			return nil, fmt.Errorf("option %q is not valid UTF-8", o.ID)
		}
		seen[o.ID] = true
		label := o.Label
		if label == "" {
			label = o.ID
		}
		opts = append(opts, option{ID: o.ID, Label: label, Style: o.Style})
	}
	return opts, nil
}
