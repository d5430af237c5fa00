package dispatch

import (
	"slices"
	"strings"

	"github.com/acpgw/gateway/channels"
)

// Open is a message of the running turn that the platform shows with a
// tool still running (a tool line, or a progress card with such a row),
// with what it must show if the turn is cut off: Lines, the tool's line
// as cancelled (one), or a card's rows (a finished row as it is, a
// running one as cancelled). Options.OnOpen reports them, so that they
// can be kept where whoever takes the thread up after this process died
// finds them and edits the same message.
type Open struct {
	// Key is the lane's key of the message ("tool:<id>", "card:<n>").
	Key string
	// ID is the posted message.
	ID channels.MessageID
	// Card says the message is a progress card (channels.Carder.Card);
	// otherwise it is one tool line (channels.Editor.Edit), Lines[0].
	Card  bool
	Lines []channels.Message
}

// noteCut keeps the cut-off line of a tool's latest state (cut "" for a
// terminal state): what is delivered next for key is that state, so
// noteShown finds its cut-off line here.
func (l *Lane) noteCut(key, cut string) {
	if l.onOpen == nil || l.editor == nil {
		return
	}
	if cut == "" {
		delete(l.cuts, key)
		return
	}
	l.cuts[key] = cut
}

// noteShown books that the message of key now shows its latest state as
// message h: it is open while a tool in it runs.
func (l *Lane) noteShown(key string, h channels.Handle) {
	if l.onOpen == nil || l.editor == nil {
		return
	}
	var o Open
	if strings.HasPrefix(key, cardPrefix) {
		c := l.cards[key]
		if c == nil {
			return
		}
		open := false
		for i := range c.rows {
			if c.cuts[i] != "" {
				open = true
				break
			}
		}
		if open {
			o = Open{Key: key, ID: h.ID, Card: true, Lines: make([]channels.Message, len(c.rows))}
			for i, r := range c.rows {
				if c.cuts[i] != "" {
					r.Text = c.cuts[i]
				}
				o.Lines[i] = r
			}
		}
	} else if cut := l.cuts[key]; cut != "" {
		o = Open{Key: key, ID: h.ID, Lines: []channels.Message{{Kind: channels.KindTool, Key: msgKey(key), Text: cut}}}
	}
	i := slices.IndexFunc(l.opens, func(x Open) bool { return x.Key == key })
	switch {
	case o.Key == "" && i < 0:
		return
	case o.Key == "":
		l.opens = slices.Delete(l.opens, i, i+1)
	case i < 0:
		l.opens = append(l.opens, o)
	case sameOpen(l.opens[i], o):
		return
	default:
		l.opens[i] = o
	}
	l.opensChanged = true
}

// noteGone books that the message of key is no longer this turn's (an
// edit refused for good: its state is posted anew).
func (l *Lane) noteGone(key string) {
	if i := slices.IndexFunc(l.opens, func(x Open) bool { return x.Key == key }); i >= 0 {
		l.opens = slices.Delete(l.opens, i, i+1)
		l.opensChanged = true
	}
}

// forgetOpens drops the open messages of an ended turn: its end showed
// their final state. The cut-off lines of a later turn's tools, pushed
// before this turn's end was delivered, stay.
func (l *Lane) forgetOpens() {
	for k := range l.cuts {
		if !slices.ContainsFunc(l.queue, func(it *item) bool { return it.key == k }) {
			delete(l.cuts, k) // kept: a later turn's tool, queued already
		}
	}
	if len(l.opens) > 0 {
		l.opens = l.opens[:0]
		l.opensChanged = true
	}
}

// tellOpens reports the open messages to Options.OnOpen if they changed
// since it was last told (from Step).
func (l *Lane) tellOpens() {
	if !l.opensChanged {
		return
	}
	l.opensChanged = false
	l.onOpen(slices.Clone(l.opens))
}

func sameOpen(a, b Open) bool {
	return a.Key == b.Key && a.ID == b.ID && a.Card == b.Card && slices.Equal(a.Lines, b.Lines)
}
