package dispatch

import (
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// noticePrefix marks the keys of urgent notices among the lane's handles.
// Like prompts they outlive the turn until replaced.
const noticePrefix = "notice:"

// Notice queues a system line (already prefixed) that is delivered ahead
// of the ordered queue: it does not wait behind the turn's text, held by
// a final_only turn or paced out in a long answer, yet it is retried like
// any output while the platform is unreachable. Notices keep their order
// among themselves. key, if not "", names the notice for ReplaceNotice.
func (l *Lane) Notice(now time.Time, key, text string) {
	it := &item{kind: itemPost, msgKind: channels.KindNotice, text: text, since: now}
	if key != "" {
		it.key = noticePrefix + key
	}
	// A notice goes ahead of its own turn's outputs, never of the end of
	// a turn before it: a stop of the next turn is not told in this one.
	for i := len(l.queue) - 1; i >= 0; i-- {
		if l.queue[i].kind == itemTurnEnd {
			it.after = l.queue[i]
			break
		}
	}
	l.urgent = append(l.urgent, it)
}

// Reply queues the answer text to one person's message, delivered ahead
// of the ordered queue like a Notice but behind nothing: through private
// (an answer only that person sees, which counts for no channel's
// pacing) when it is not nil, else as a notice in the thread (text is
// then the whole line, prefixed). It is retried like any output while
// the platform is unreachable; a private answer refused for good is
// logged, not told in the thread as a loss.
func (l *Lane) Reply(now time.Time, text string, private func(context.Context, string) error) {
	l.urgent = append(l.urgent, &item{kind: itemPost, msgKind: channels.KindNotice, text: text, since: now, reply: private})
}

// urgentDue reports whether the first urgent notice may go: the turn
// end it waits behind (item.after) is delivered.
func (l *Lane) urgentDue() bool {
	if len(l.urgent) == 0 {
		return false
	}
	after := l.urgent[0].after
	if after == nil {
		return true
	}
	for _, it := range l.queue {
		if it == after {
			return false
		}
	}
	l.urgent[0].after = nil
	return true
}

// ReplaceNotice replaces the notice key with text, in order with the
// outputs pushed before it: edited in place where the channel can edit
// and the notice was shown, otherwise posted as a new message (in place
// of the notice when it was not shown yet).
func (l *Lane) ReplaceNotice(now time.Time, key, text string) {
	key = noticePrefix + key
	for _, it := range l.urgent {
		if it.key == key {
			it.text, it.final = text, true
			return
		}
	}
	shown, wasShown := l.noticeShown[key]
	delete(l.noticeShown, key)
	if wasShown && shown == text {
		// Shown already in these words (where the channel cannot edit,
		// a stop is told in its final words at once): one notice.
		delete(l.handles, key)
		return
	}
	if _, ok := l.handles[key]; ok && l.editor != nil {
		l.keyed(now, channels.KindNotice, key, text)
		return
	}
	delete(l.handles, key)
	l.enqueue(&item{kind: itemPost, msgKind: channels.KindNotice, text: text, since: now})
}

// SettleNotice corrects notice key, which stopped being true ("Queued:
// 1 ahead of it…" once its message runs), to text: edited in place where
// it was shown and the channel edits, dropped where it was not shown yet,
// left as it is otherwise (a correction is no news worth a message).
func (l *Lane) SettleNotice(now time.Time, key, text string) {
	key = noticePrefix + key
	for i, it := range l.urgent {
		if it.key == key && !it.final {
			l.urgent = slices.Delete(l.urgent, i, i+1)
			return
		}
	}
	delete(l.noticeShown, key)
	if _, ok := l.handles[key]; ok && l.editor != nil {
		l.keyed(now, channels.KindNotice, key, text)
		return
	}
	delete(l.handles, key)
}

// stepUrgent delivers the first urgent notice, or answer (Reply).
func (l *Lane) stepUrgent(ctx context.Context, now time.Time) (time.Time, bool) {
	it := l.urgent[0]
	private := it.reply != nil
	if w := l.postDue(now); !w.IsZero() && !private {
		return w, false
	}
	op, h, err := "reply", channels.Handle{}, error(nil)
	if private {
		err = it.reply(ctx, it.text)
	} else {
		op = "post"
		h, err = l.ad.Post(ctx, l.thread, channels.Message{Kind: it.msgKind, Text: it.text, Key: it.key})
	}
	switch l.judge(now, op, err) {
	case retry:
		return l.blockedUntil, false
	case abandon:
		l.abandon(now, err)
		return time.Time{}, true
	}
	l.urgent = l.urgent[1:]
	switch {
	case err != nil && private:
		l.log.Warn("the platform refused a private answer; dropped", "thread", l.thread, "chars", utf8.RuneCountInString(it.text), "err", err)
		return time.Time{}, true
	case err != nil:
		l.dropped(it, it.text, err)
		return time.Time{}, true
	}
	l.obs.Delivered(op, it.msgKind, now.Sub(it.since))
	if private {
		return time.Time{}, true
	}
	l.sent(h)
	if it.key == "" || it.final {
		return time.Time{}, true
	}
	l.noticeShown[it.key] = it.text
	if h.Known() {
		l.handles[it.key] = h
		l.lastEdit[h.ID] = now
	}
	return time.Time{}, true
}
