package dispatch

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// verdict is what the lane does after a delivery attempt.
type verdict uint8

const (
	// delivered: the platform took it.
	delivered verdict = iota
	// retry: wait until blockedUntil and try the same thing again (a
	// rate limit, or the platform is unreachable).
	retry
	// drop: the platform refused it for good; give this message up.
	drop
	// abandon: the platform has been unreachable for retryFor; give up
	// everything undelivered (Lane.abandon has done it).
	abandon
)

// judge classifies the outcome of a delivery attempt (op "post", "edit"
// or "prompt"). A rate limit waits as the platform asks; a permanent
// error (channels.IsPermanent) is given up at once; any other error means
// the platform is unreachable: the lane waits with a backoff (1 s
// doubling to 30 s) and tries again, until the outage has lasted
// retryFor. Only a success ends an outage.
func (l *Lane) judge(now time.Time, op string, err error) verdict {
	if err == nil {
		l.lastPost = postTime(op, now, l.lastPost)
		l.outageSince, l.backoff = time.Time{}, 0
		return delivered
	}
	if l.rateLimited(now, err) {
		return retry
	}
	l.lastPost = postTime(op, now, l.lastPost)
	if channels.IsPermanent(err) {
		return drop
	}
	if l.outageSince.IsZero() {
		l.outageSince = now
	}
	if now.Sub(l.outageSince) >= l.retryFor {
		return abandon
	}
	l.backoff = min(max(2*l.backoff, minBackoff), maxBackoff)
	l.blockedUntil = now.Add(l.backoff)
	l.log.Warn(op+" failed; the platform seems unreachable, retrying", "thread", l.thread,
		"retry_in", l.backoff, "failing_for", now.Sub(l.outageSince), "err", err)
	return retry
}

// postTime returns lastPost after an attempt of op at now: posts count
// for pacing, edits and private answers do not.
func postTime(op string, now, last time.Time) time.Time {
	if op == "edit" || op == "reply" {
		return last
	}
	return now
}

// loss is what the lane gave up and has not yet told the thread about.
type loss struct {
	msgs, chars int
	outage      bool // some of it was lost to an outage (else refused)
}

func (s *loss) add(text string) {
	s.msgs++
	s.chars += utf8.RuneCountInString(text)
}

// notice renders the loss for the thread. It names no platform.
func (s loss) notice() string {
	what := fmt.Sprintf("%d messages (%d characters)", s.msgs, s.chars)
	pron := "them"
	if s.msgs == 1 {
		what = fmt.Sprintf("1 message (%d characters)", s.chars)
		pron = "it"
	}
	if s.outage {
		return sysmsg.Prefix(what + " could not be delivered: the chat platform could not be reached, and the gateway gave up trying.")
	}
	return sysmsg.Prefix(what + " could not be delivered: the chat platform refused " + pron + ".")
}

// dropped records that it was given up because the platform refused it
// (a permanent error), and queues the loss notice.
func (l *Lane) dropped(it *item, text string, err error) {
	if it == l.lossItem {
		// The notice itself is refused: do not loop on it.
		l.lossItem, l.lost = nil, loss{}
		l.log.Error("the notice of undelivered messages was refused too", "thread", l.thread, "err", err)
		return
	}
	l.log.Error("the platform refused a message; dropped", "thread", l.thread, "kind", it.msgKind, "chars", utf8.RuneCountInString(text), "err", err)
	if isBlank(text) {
		return
	}
	l.lost.add(text)
	l.queueLossNotice()
}

// abandon gives up everything undelivered after an outage of retryFor:
// queued messages, pending edits and urgent notices are dropped and
// counted, prompts are reported as not shown (their posted callback gets
// err), turn ends stay so that turns still end. A notice of the loss is
// queued first; it is delivered when the platform is back (the lane keeps
// trying it, each outage window dropping what piled up meanwhile).
func (l *Lane) abandon(now time.Time, err error) {
	failing := now.Sub(l.outageSince)
	var prompts []*item
	kept := make([]*item, 0, 2)
	head := true // the first text item is the one l.seg describes
	for _, it := range l.queue {
		switch {
		case it.kind == itemTurnEnd || it == l.lossItem:
			kept = append(kept, it)
		case it.kind == itemPrompt:
			prompts = append(prompts, it)
		case it.kind == itemText || it.kind == itemThought:
			rest := it.text
			if head {
				rest, head = l.unshown(it), false
			}
			if !isBlank(rest) {
				for range l.splitText(rest) {
					l.lost.msgs++
				}
				l.lost.chars += utf8.RuneCountInString(rest)
			}
		default:
			l.lost.add(it.text)
			if it.kind == itemFile {
				it.reportFile(fmt.Errorf("the chat could not be reached for %s: the file was given up: %w", failing.Round(time.Second), err))
			}
		}
	}
	for _, e := range l.edits {
		l.lost.add(e.text)
	}
	for _, it := range l.urgent {
		switch {
		case it.kind == itemPrompt:
			prompts = append(prompts, it)
		case it.reply != nil:
			// A private answer is nobody else's loss to be told of.
			l.log.Warn("a private answer given up after the outage", "thread", l.thread, "err", err)
		default:
			l.lost.add(it.text)
		}
	}
	l.lost.outage = true
	l.queue, l.urgent, l.edits = kept, nil, nil
	clear(l.editFor)
	clear(l.queued)
	l.seg, l.carry = segment{}, ""
	// A new window for what comes next, the loss notice first.
	l.outageSince = time.Time{}
	l.blockedUntil = now.Add(max(l.backoff, minBackoff))
	l.log.Error("the platform has been unreachable too long; undelivered output dropped", "thread", l.thread,
		"failing_for", failing, "messages", l.lost.msgs, "chars", l.lost.chars, "err", err)
	l.queueLossNotice()
	for _, p := range prompts {
		delete(l.formKeys, p.key)
		if p.posted != nil {
			p.posted(channels.Handle{}, err)
		}
	}
}

// unshown returns the text of the head text item it that is not in the
// thread yet.
func (l *Lane) unshown(it *item) string {
	rest := it.text[min(l.seg.sent, len(it.text)):]
	if l.seg.msg.Known() && l.seg.shown != "" {
		n := commonPrefixBytes(l.seg.open+rest, l.seg.shown) - len(l.seg.open)
		rest = rest[min(max(n, 0), len(rest)):]
	}
	return rest
}

// queueLossNotice puts the notice of what was lost at the head of the
// queue, or updates the one already there.
func (l *Lane) queueLossNotice() {
	if l.lost.msgs == 0 {
		return
	}
	if l.lossItem != nil {
		l.lossItem.text = l.lost.notice()
		return
	}
	l.lossItem = &item{kind: itemPost, msgKind: channels.KindNotice, text: l.lost.notice()}
	l.queue = append([]*item{l.lossItem}, l.queue...)
}

// lossTold records that the loss notice it was delivered.
func (l *Lane) lossTold(it *item) {
	if it == l.lossItem {
		l.lossItem, l.lost = nil, loss{}
	}
}
