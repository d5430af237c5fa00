package dispatch

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch/split"
)

// segment is the delivery state of the text item at the head of the queue.
type segment struct {
	sent  int             // bytes of the item's text already in finished messages
	msg   channels.Handle // the draft message showing text[sent:], if any
	shown string          // what the draft message shows now
	// open is the code fence line to reopen before text[sent:] when an
	// earlier message of the segment ended inside a fence.
	open string
}

// shows reports whether the draft message shows exactly open+rest.
func (s *segment) shows(rest string) bool {
	return len(s.shown) == len(s.open)+len(rest) && strings.HasPrefix(s.shown, s.open) && s.shown[len(s.open):] == rest
}

// blockChars is the size at which block mode releases text even without a
// paragraph break, when the channel has no length limit.
const blockChars = 4000

// stepText delivers the text item at the head. closed says that something
// follows it in the queue (or the turn ended), so the text is complete.
func (l *Lane) stepText(ctx context.Context, now time.Time, it *item, closed bool) (time.Time, bool) {
	if l.carry != "" && it.kind == itemText && l.seg.sent == 0 {
		rest := it.text
		it.buf.Reset()
		it.appendText(l.carry)
		it.appendText(rest)
		l.carry = ""
	}
	rest := it.text[l.seg.sent:]
	if isBlank(rest) {
		if !closed {
			return time.Time{}, false
		}
		// Whitespace alone is never posted (platforms reject it); it is
		// carried to the start of the next text of the turn instead.
		if it.kind == itemText {
			l.carry += rest
		}
		l.pop()
		l.seg = segment{}
		return time.Time{}, true
	}
	if l.draftMode {
		return l.stepDraft(ctx, now, it, rest, closed)
	}
	return l.stepBlocks(ctx, now, it, rest, closed)
}

// stepDraft streams text into one message edited in place, rolling over
// to a new message at the channel's limit.
func (l *Lane) stepDraft(ctx context.Context, now time.Time, it *item, rest string, closed bool) (time.Time, bool) {
	if l.seg.msg.Known() && !l.seg.shows(rest) {
		// The draft shows less than there is, and it cannot show more
		// before its next edit is due: the text is cut only then, not
		// again at every step of a stream in between. (A draft that
		// already shows its whole first part, the text having grown past
		// the limit right after it, is finished then too, at most
		// MinEditInterval later than a cut at once would have.)
		if due := l.lastEdit[l.seg.msg.ID].Add(l.limits.MinEditInterval); now.Before(due) {
			return due, false
		}
	}
	// Only the first part matters here (the rest goes in later messages):
	// cutting it costs one message's window however long the text grew
	// while no edit was due.
	p, more, nextOpen := split.First(l.seg.open+rest, l.split)
	final := closed || more
	text := p.Text()
	// finish records that p is complete: the rest of the text continues
	// in a new message, reopening a code fence p had to close.
	finish := func() {
		l.seg.sent += max(len(p.Body)-len(l.seg.open), 0)
		l.seg.open = nextOpen
		l.seg.msg, l.seg.shown = channels.Handle{}, ""
	}
	if final && isBlank(p.Body) {
		finish()
		return time.Time{}, true
	}
	if !l.seg.msg.Known() {
		h, wait, res := l.post(ctx, now, it, text)
		switch res {
		case retry:
			return wait, false
		case abandon:
			return time.Time{}, true
		case drop:
			finish()
			return time.Time{}, true
		}
		l.seg.msg, l.seg.shown = h, text
		l.lastEdit[h.ID] = now
		l.delivered("post", it, now)
		if !h.Known() {
			// Without an id the draft cannot grow: treat the part as sent.
			finish()
			return time.Time{}, true
		}
	} else if text != l.seg.shown {
		if due := l.lastEdit[l.seg.msg.ID].Add(l.limits.MinEditInterval); now.Before(due) {
			return due, false
		}
		err := l.editor.Edit(ctx, l.seg.msg, channels.Message{Kind: it.msgKind, Text: text})
		switch l.judge(now, "edit", err) {
		case retry:
			return l.blockedUntil, false
		case abandon:
			l.abandon(now, err)
			return time.Time{}, true
		}
		if err != nil {
			// The draft cannot be edited: continue in a new message with
			// what the old one does not show yet.
			l.log.Warn("draft edit failed; continuing in a new message", "thread", l.thread, "err", err)
			l.seg.sent += max(commonPrefixBytes(p.Body, l.seg.shown)-len(l.seg.open), 0)
			l.seg.open = ""
			l.seg.msg, l.seg.shown = channels.Handle{}, ""
			return time.Time{}, true
		}
		l.lastEdit[l.seg.msg.ID] = now
		l.seg.shown = text
		l.delivered("edit", it, now)
	}
	if final {
		finish()
		return time.Time{}, true
	}
	return time.Time{}, false
}

// splitText splits s by the channel's limits; text that fits (always, on
// a channel without limits) costs no allocation beyond the lane's buffer.
func (l *Lane) splitText(s string) []split.Part {
	if split.Fits(s, l.split) {
		l.one[0] = split.Part{Body: s}
		return l.one[:]
	}
	return split.Split(s, l.split)
}

// stepBlocks posts text as new messages at paragraph, sentence or size
// boundaries; a fragment never waits longer than MaxHold.
func (l *Lane) stepBlocks(ctx context.Context, now time.Time, it *item, rest string, closed bool) (time.Time, bool) {
	var n int // bytes of rest to release now
	lim := l.split
	if lim.MaxChars == 0 || lim.MaxChars > blockChars {
		lim.MaxChars = blockChars
	}
	first, more, _ := split.First(rest, lim)
	switch {
	case closed || more:
		n = len(first.Body)
	default:
		n = lastParagraphBreak(rest)
		if n == 0 && !it.heldSince.IsZero() && !now.Before(it.heldSince.Add(MaxHold)) {
			n = len(rest)
		}
	}
	if n == 0 {
		if it.heldSince.IsZero() {
			it.heldSince = now
		}
		return it.heldSince.Add(MaxHold), false
	}
	chunk, _, _ := split.First(rest[:n], l.split)
	if isBlank(chunk.Body) {
		l.seg.sent += len(chunk.Body)
		return time.Time{}, true
	}
	_, wait, res := l.post(ctx, now, it, chunk.Text())
	switch res {
	case retry:
		return wait, false
	case abandon:
		return time.Time{}, true
	}
	l.seg.sent += len(chunk.Body)
	if res == delivered {
		l.delivered("post", it, now)
	}
	if l.seg.sent >= len(it.text) {
		it.heldSince = time.Time{}
	}
	return time.Time{}, true
}

// post sends a new message for text item it, honouring post pacing,
// rate limits and outages. res is retry when the caller must wait until
// wait; drop when the platform refused the text for good (counted as
// lost; the caller moves past it rather than stalling the thread);
// abandon when the lane gave up everything undelivered (it is gone).
func (l *Lane) post(ctx context.Context, now time.Time, it *item, text string) (h channels.Handle, wait time.Time, res verdict) {
	if w := l.postDue(now); !w.IsZero() {
		return h, w, retry
	}
	h, err := l.ad.Post(ctx, l.thread, channels.Message{Kind: it.msgKind, Text: text})
	switch res = l.judge(now, "post", err); res {
	case retry:
		return h, l.blockedUntil, retry
	case abandon:
		l.abandon(now, err)
	case drop:
		l.dropped(it, text, err)
	}
	if res == delivered {
		l.typingAfterPost(now)
		l.sent(h)
	}
	return h, time.Time{}, res
}

// lastParagraphBreak returns the byte offset just after the last blank
// line of s that is outside a code fence, or 0.
func lastParagraphBreak(s string) int {
	best, inFence, text := 0, false, false
	off := 0
	for off < len(s) {
		nl := strings.IndexByte(s[off:], '\n')
		if nl < 0 {
			break
		}
		line := s[off : off+nl]
		if isFence(line) {
			inFence = !inFence
		}
		next := off + nl + 1
		blank := strings.TrimSpace(line) == ""
		if !inFence && blank && text {
			best = next
		}
		text = text || !blank
		off = next
	}
	return best
}

func isFence(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(line)-len(t) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"))
}

func isBlank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// commonPrefixBytes returns the length of the longest common prefix of a
// and b that ends on a rune boundary.
func commonPrefixBytes(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8.RuneStart(a[n]) {
		n--
	}
	return n
}

// delivered reports a text delivery: what waited longest is shown now.
func (l *Lane) delivered(op string, it *item, now time.Time) {
	if !it.since.IsZero() {
		l.obs.Delivered(op, it.msgKind, now.Sub(it.since))
	}
	it.since = time.Time{}
}
