package dispatch

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
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
func (l *Lane) Prompt(now time.Time, key string, c channels.Choice, posted func(channels.Handle, error)) {
	l.visible(now)
	l.enqueue(&item{kind: itemPrompt, msgKind: channels.KindPermission, key: promptPrefix + key, choice: c, posted: posted, since: now})
}

// Resolve replaces the prompt key's message with text, removing its
// buttons (answered, expired, cancelled). Without Editor, or when the
// prompt could not be posted, text is posted as a new message.
func (l *Lane) Resolve(now time.Time, key, text string) {
	key = promptPrefix + key
	for _, it := range l.queue {
		if it.kind == itemPrompt && it.key == key {
			// Not shown yet: show the outcome instead of the buttons.
			it.kind, it.text, it.choice, it.posted = itemPost, text, channels.Choice{}, nil
			it.key = ""
			return
		}
	}
	if _, ok := l.handles[key]; ok && l.editor != nil {
		l.keyed(now, channels.KindPermission, key, text)
		return
	}
	delete(l.handles, key)
	l.enqueue(&item{kind: itemPost, msgKind: channels.KindPermission, text: text, since: now})
}

// stepPrompt shows the prompt item it (at the head, or taken out of a held
// final_only queue).
func (l *Lane) stepPrompt(ctx context.Context, now time.Time, it *item) (time.Time, bool) {
	if w := l.postDue(now); !w.IsZero() {
		return w, false
	}
	var h channels.Handle
	var err error
	if l.prompter != nil {
		h, err = l.prompter.Prompt(ctx, l.thread, l.fitChoice(it.choice))
	} else {
		h, err = l.ad.Post(ctx, l.thread, channels.Message{Kind: channels.KindPermission, Text: l.numbered(it.choice), Key: it.key})
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
	}
	l.remove(it)
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
// numbered list to answer by replying with a number.
func (l *Lane) numbered(c channels.Choice) string {
	var b strings.Builder
	b.WriteString("\n\nReply with the number of your choice:")
	for i, o := range c.Options {
		b.WriteString("\n")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(". ")
		b.WriteString(o.Label)
	}
	tail := b.String()
	return l.fitText(c.Text, tail)
}

// fitChoice cuts the choice's text to the channel's limit.
func (l *Lane) fitChoice(c channels.Choice) channels.Choice {
	c.Text = l.fitText(c.Text, "")
	return c
}

func (l *Lane) fitText(body, tail string) string {
	max := l.limits.MaxMessageChars
	if max <= 0 {
		return body + tail
	}
	budget := max - len([]rune(tail))
	if budget < 1 {
		budget = 1
	}
	return tooldisplay.CutMiddle(body, budget) + tail
}
