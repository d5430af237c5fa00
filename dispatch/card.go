package dispatch

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
)

// cardPrefix marks the keys of progress cards among the lane's handles
// and queued items.
const cardPrefix = "card:"

// card is a progress card: the tool lines of a run of a turn's tool calls,
// shown as the rows of one message where the adapter is a channels.Carder
// with cards on. A card takes the turn's tool calls until another message
// is queued after it (text, a notice, the turn's end), so that the thread
// still reads in order; a permission prompt leaves it open, its buttons
// below the card. Each row keeps its tool's latest line.
type card struct {
	key  string             // cardPrefix + a number, the lane's edit key
	rows []channels.Message // in the order the tools started
	cuts []string           // by row: its cut-off line, "" when terminal (open.go)
	at   map[string]int     // tool call id → index in rows
}

// text is the card as plain lines, for logs and what a loss reports.
func (c *card) text() string {
	lines := make([]string, len(c.rows))
	for i, r := range c.rows {
		lines[i] = r.Text
	}
	return strings.Join(lines, "\n")
}

// cardTool shows a tool call's line in a card: a row of the card it is
// in, or a new row of the open card, or the first row of a new card.
// The card is posted in order with the other outputs; once posted it is
// edited as a whole, at most once per MinEditInterval.
func (l *Lane) cardTool(now time.Time, id, text, cut string) {
	c := l.cardOf[id]
	open := c == nil || c == l.card // an earlier card is never reopened
	if c == nil {
		c = l.card
		if c == nil {
			l.cardSeq++
			c = &card{key: cardPrefix + strconv.Itoa(l.cardSeq), at: map[string]int{}}
			l.cards[c.key] = c
		}
		c.at[id] = len(c.rows)
		c.rows = append(c.rows, channels.Message{Kind: channels.KindTool, Key: id})
		c.cuts = append(c.cuts, "")
		l.cardOf[id] = c
	}
	c.rows[c.at[id]].Text = text
	c.cuts[c.at[id]] = cut
	l.keyed(now, channels.KindTool, c.key, c.text())
	if open {
		l.card = c // after keyed, which closes the open card when it queues one
	}
}

// closeCard ends the open card when it is queued: a message other than
// the card or a prompt follows it, and later tools start a new card.
func (l *Lane) closeCard(it *item) {
	if l.card != nil && it.key != l.card.key && it.kind != itemPrompt {
		l.card = nil
	}
}

// sendCard posts the card of key (h zero) or replaces the rows of card h.
func (l *Lane) sendCard(ctx context.Context, key string, h channels.Handle) (channels.Handle, error) {
	c := l.cards[key]
	if c == nil {
		c = &card{key: key}
	}
	return l.carder.Card(ctx, l.thread, h, c.rows)
}

// forgetCards drops the cards of an ended turn, after its queued keys
// were cleared; the cards still queued (a later turn's, pushed before this
// turn's end was delivered) stay, and so does the open one among them.
func (l *Lane) forgetCards() {
	keep := map[string]bool{}
	for _, it := range l.queue {
		if strings.HasPrefix(it.key, cardPrefix) && l.cards[it.key] != nil {
			keep[it.key] = true
			l.queued[it.key] = it
		}
	}
	if l.card != nil && !keep[l.card.key] {
		l.card = nil
	}
	for k, c := range l.cards {
		if keep[k] {
			continue
		}
		delete(l.cards, k)
		for id, of := range l.cardOf {
			if of == c {
				delete(l.cardOf, id)
			}
		}
	}
}
