package owner

// The context of a thread the bot joins: when it is mentioned in a thread
// not bound yet, what was said there before is read (channels.History)
// and put before the first prompt (context.backfill): what people wrote
// and the agent's text, not the gateway's own tool lines, notices,
// prompts and cards (channels.Inbound.Meta).

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// Limits of the backfill's reading.
const (
	backfillPage  = 100
	backfillPages = 10
)

// backfill returns the quoted context of in's thread: the messages before
// in (at most the policy's context.backfill), or "" when there are none
// or the platform cannot read them. It blocks on I/O; in's author was let
// in (nothing is read for people without access).
func (t *Thread) backfill(ctx context.Context, in channels.Inbound) string {
	h, ok := t.runner.History()
	b := t.d.Host.PolicyFor(t.ref, t.space).Context.Backfill
	if !ok || b.Messages <= 0 || b.Chars <= 0 {
		return ""
	}
	if in.ID != "" && string(in.ID) == t.ref.Thread {
		// The message starts its thread (a mention in a channel, which
		// the thread was made for): nothing was said there before it.
		return ""
	}
	msgs, older, err := readBefore(ctx, h, t.ref, in.ID, b.Messages)
	if err != nil {
		t.d.Log.Warn("cannot read all of the thread's earlier messages; the agent starts with those read", "thread", t.ref, "err", err)
	}
	said, cut := fitBackfill(msgs, b)
	cut = cut || older
	if len(said) > 0 {
		t.d.Log.Info("thread context read for the first prompt", "thread", t.ref, "messages", len(said), "cut", cut)
	}
	return sysmsg.Backfill{Messages: said, Cut: cut}.Body()
}

// readBefore reads the thread's messages before the message id (all of
// them when id is not met), keeping the last n that are quoted, oldest
// first; older: some quoted ones before them were left out.
func readBefore(ctx context.Context, h channels.History, ref channels.ThreadRef, id channels.MessageID, n int) (keep []channels.Inbound, older bool, err error) {
	after := channels.MessageID("")
	for range backfillPages {
		p, err := h.MessagesAfter(ctx, ref, after, backfillPage)
		if _, ok := errors.AsType[*channels.RateLimitError](err); ok {
			return keep, older, err // not worth a wait: the prompt runs without
		}
		if err != nil {
			return keep, older, err
		}
		for _, m := range p.Messages {
			if id != "" && m.ID == id {
				return keep, older, nil
			}
			if !quoted(m) {
				continue // the gateway's own lines count for nothing
			}
			keep = append(keep, m)
			if len(keep) > n {
				keep, older = keep[1:], true
			}
		}
		if !p.More || p.Last == "" {
			break
		}
		after = p.Last
	}
	return keep, older, nil
}

// fitBackfill keeps the newest messages whose text fits b.Chars (the
// newest cut to fit when it alone does not); cut: some were left out.
func fitBackfill(msgs []channels.Inbound, b Backfill) (said []sysmsg.Said, cut bool) {
	left := b.Chars
	start := len(msgs)
	for start > 0 && left > 0 {
		m := msgs[start-1]
		if !quoted(m) {
			start--
			continue
		}
		n := utf8.RuneCountInString(m.Text)
		if n > left && start < len(msgs) {
			break
		}
		left -= n
		start--
	}
	cut = start > 0
	for _, m := range msgs[start:] {
		if !quoted(m) {
			continue
		}
		text := m.Text
		if utf8.RuneCountInString(text) > b.Chars {
			text = string([]rune(text)[:b.Chars])
		}
		said = append(said, sysmsg.Said{Author: thread.DisplayName(m.Author), Bot: m.Author.Bot, Self: m.Author.Self, Time: m.Time, Text: text, Cut: len(text) < len(m.Text)})
		cut = cut || len(text) < len(m.Text)
	}
	return said, cut
}

// quoted reports whether m is part of a thread's context: a message with
// text that people wrote, or the agent's text; not the gateway's own
// lines, notices, prompts or cards (Meta).
func quoted(m channels.Inbound) bool {
	return m.Intent() == channels.IntentMessage && m.Text != "" && !m.Meta
}
