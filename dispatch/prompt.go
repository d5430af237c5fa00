package dispatch

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch/split"
	"github.com/acpgw/gateway/tooldisplay"
)

// promptPrefix marks the keys of prompt messages among the lane's handles.
// They outlive the turn: a prompt can be resolved after the turn ended.
const promptPrefix = "prompt:"

// Prompt queues a choice (a permission prompt) in order with the outputs
// pushed before it: text of the turn so far is delivered first. Unlike
// other outputs it is delivered at once in a final_only turn, since the
// turn cannot go on until someone answers. Where the adapter has no
// Prompter the choice is posted as numbered options for a reply. posted,
// if set, is called from Step with the prompt's handle, or with the error
// when it could not be shown.
//
// A text longer than the channel's limit is never cut silently: the choice
// shows its start and end around a note that says how many characters are
// hidden and where the whole text is — attached to the prompt where the
// adapter takes attachments (Limits.MaxAttachmentBytes), otherwise posted
// just before the prompt in as many messages as it takes (at most
// maxDetailParts; a longer text is said to be too long to show).
func (l *Lane) Prompt(now time.Time, key string, c channels.Choice, posted func(channels.Handle, error)) {
	l.visible(now)
	c.Attachment = nil // only fitChoice attaches, where the channel can take it
	it := &item{kind: itemPrompt, msgKind: channels.KindPermission, key: promptPrefix + key, choice: c, posted: posted, since: now}
	if l.prompter != nil {
		it.choice, it.detail = l.fitChoice(c)
	} else {
		it.text, it.detail = l.numbered(c)
	}
	l.enqueue(it)
}

// Resolve replaces the prompt key's message with text, removing its
// buttons (answered, expired, cancelled). Without Editor, or when the
// prompt could not be posted, text is posted as a new message.
func (l *Lane) Resolve(now time.Time, key, text string) {
	key = promptPrefix + key
	for _, it := range l.queue {
		if it.kind == itemPrompt && it.key == key {
			// Not shown yet: show the outcome instead of the buttons.
			it.kind, it.text, it.choice, it.posted, it.detail, it.form = itemPost, l.fitResolved(text), channels.Choice{}, nil, nil, nil
			it.key = ""
			delete(l.formKeys, key)
			return
		}
	}
	text = l.fitResolved(text)
	kind := channels.KindPermission
	if l.formKeys[key] {
		kind = channels.KindNotice
		delete(l.formKeys, key)
	}
	if _, ok := l.handles[key]; ok && l.editor != nil {
		l.keyed(now, kind, key, text)
		return
	}
	delete(l.handles, key)
	l.enqueue(&item{kind: itemPost, msgKind: kind, text: text, since: now})
}

// stepPrompt shows the prompt item it (at the head, or taken out of a held
// final_only queue).
func (l *Lane) stepPrompt(ctx context.Context, now time.Time, it *item) (time.Time, bool) {
	if w := l.postDue(now); !w.IsZero() {
		return w, false
	}
	if len(it.detail) > 0 {
		// The whole text, before the prompt that shows it shortened.
		_, err := l.ad.Post(ctx, l.thread, channels.Message{Kind: channels.KindPermission, Text: it.detail[0]})
		switch l.judge(now, "post", err) {
		case retry:
			return l.blockedUntil, false
		case abandon:
			l.abandon(now, err) // tells it.posted
			return time.Time{}, true
		case drop:
			// The whole text cannot be shown, so neither is the prompt
			// that points to it: nobody may allow what they cannot see.
			l.log.Error("the platform refused the whole text of a prompt; the prompt is not shown", "thread", l.thread, "err", err)
			l.remove(it)
			if it.posted != nil {
				it.posted(channels.Handle{}, err)
			}
			return time.Time{}, true
		}
		l.typingAfterPost(now)
		it.detail = it.detail[1:]
		return time.Time{}, true
	}
	var h channels.Handle
	var err error
	switch {
	case it.form != nil:
		h, err = l.postForm(ctx, it)
	case l.prompter != nil:
		h, err = l.prompter.Prompt(ctx, l.thread, it.choice)
	default:
		h, err = l.ad.Post(ctx, l.thread, channels.Message{Kind: channels.KindPermission, Text: it.text, Key: it.key})
	}
	switch l.judge(now, "prompt", err) {
	case retry:
		return l.blockedUntil, false
	case abandon:
		l.abandon(now, err) // tells it.posted
		return time.Time{}, true
	case drop:
		l.log.Error("the platform refused a prompt", "thread", l.thread, "err", err)
	default:
		l.obs.Delivered("prompt", it.msgKind, now.Sub(it.since))
	}
	if err == nil {
		l.typingAfterPost(now)
		l.sent(h)
	}
	l.remove(it)
	if err != nil {
		delete(l.formKeys, it.key) // the question is settled unshown
	}
	if err == nil && h.Known() {
		l.handles[it.key] = h
		l.lastEdit[h.ID] = now
	}
	if it.posted != nil {
		it.posted(h, err)
	}
	return time.Time{}, true
}

// remove takes it out of the queue.
func (l *Lane) remove(it *item) {
	for i, q := range l.queue {
		if q == it {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			return
		}
	}
}

// heldPrompt returns the first prompt in the queue, for a held turn.
func (l *Lane) heldPrompt() *item {
	for _, it := range l.queue {
		if it.kind == itemPrompt {
			return it
		}
	}
	return nil
}

// numbered renders a choice for channels without buttons: the options as a
// numbered list to answer by replying with a number, fitted to the
// channel like fitChoice (without an attachment), and the messages to post
// before it.
func (l *Lane) numbered(c channels.Choice) (string, []string) {
	var b strings.Builder
	b.WriteString("\n\nReply with the number of your choice:")
	for i, o := range c.Options {
		b.WriteString("\n")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(". ")
		b.WriteString(o.Label)
	}
	tail := b.String()
	text, detail, _ := l.fitText(c.Text, tail, false)
	return text, detail
}

// attachmentName is the name of the file that carries a prompt's whole
// text.
const attachmentName = "prompt.txt"

// maxDetailParts bounds the messages that carry a prompt's whole text where
// the channel cannot attach it, so that a huge tool input cannot flood the
// thread (or hold up the prompt for long).
const maxDetailParts = 8

// fitChoice fits the choice's text to the channel's limit (see Prompt) and
// returns it with the messages to post before it.
func (l *Lane) fitChoice(c channels.Choice) (channels.Choice, []string) {
	text, detail, attach := l.fitText(c.Text, "", true)
	if attach {
		c.Attachment = &channels.Attachment{Name: attachmentName, Text: c.Text}
	}
	c.Text = text
	return c, detail
}

// fitText returns body+tail shortened to the channel's limit. When body
// must be shortened, its middle gives way to a note that says how much is
// hidden and where the whole body is: attached (attach is true; only if
// canAttach and the channel takes a file that large), in the returned
// messages, or nowhere when that would take more than maxDetailParts.
func (l *Lane) fitText(body, tail string, canAttach bool) (text string, detail []string, attach bool) {
	max := l.limits.MaxMessageChars
	if max <= 0 || utf8.RuneCountInString(body)+utf8.RuneCountInString(tail) <= max {
		return body + tail, nil, false
	}
	var where string
	switch {
	case canAttach && len(body) <= l.limits.MaxAttachmentBytes:
		attach = true
		where = "the whole text is attached (" + attachmentName + ")"
	default:
		parts := split.Split(body, l.split)
		if len(parts) > maxDetailParts {
			where = "the whole text is too long to show here: do not allow what you cannot see"
			break
		}
		for _, p := range parts {
			detail = append(detail, p.Text())
		}
		where = "the whole text is in the " + strconv.Itoa(len(parts)) + " messages above"
		if len(parts) == 1 {
			where = "the whole text is in the message above"
		}
	}
	note := func(hidden int) string {
		return " ⟪… " + strconv.Itoa(hidden) + " characters hidden here; " + where + " …⟫ "
	}
	budget := max - utf8.RuneCountInString(tail)
	return tooldisplay.Elide(body, budget, note) + tail, detail, attach
}

// fitResolved fits the text of a settled prompt (its text and the outcome)
// to the channel's limit, keeping its end, where the outcome is. The whole
// prompt was shown when it was asked.
func (l *Lane) fitResolved(text string) string {
	max := l.limits.MaxMessageChars
	if max <= 0 || utf8.RuneCountInString(text) <= max {
		return text
	}
	return tooldisplay.Elide(text, max, func(hidden int) string {
		return " ⟪… " + strconv.Itoa(hidden) + " characters hidden here …⟫ "
	})
}
