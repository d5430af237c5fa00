package session

import (
	"context"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/thread/owner"
)

// closeOpenMessages edits each message a cut-off turn of ref left open
// to its cut-off text (the same message; where ad cannot edit it, it is
// left as it is), then forgets them. An edit that keeps failing is
// logged and given up: the message is not tried again. It blocks.
func (r *Router) closeOpenMessages(ctx context.Context, ad channels.Adapter, ref channels.ThreadRef) {
	rctx, cancel := context.WithTimeout(ctx, owner.WriteTimeout)
	ms, err := r.o.Store.OpenMessages(rctx, ref)
	cancel()
	if err != nil {
		r.log.Warn("cannot read the messages a cut-off turn left running", "thread", ref, "err", err)
		return
	}
	if len(ms) == 0 {
		return
	}
	ed, _ := channels.As[channels.Editor](ad)
	cd, _ := channels.As[channels.Carder](ad)
	for _, m := range ms {
		h := channels.Handle{Thread: ref, ID: m.ID}
		var edit func(context.Context) error
		switch {
		case m.Card && cd != nil && ed != nil:
			rows := make([]channels.Message, len(m.Lines))
			for i, l := range m.Lines {
				rows[i] = channels.Message{Kind: channels.KindTool, Key: l.Key, Text: l.Text}
			}
			edit = func(ctx context.Context) error { _, err := cd.Card(ctx, ref, h, rows); return err }
		case !m.Card && ed != nil:
			l := m.Lines[0]
			edit = func(ctx context.Context) error {
				return ed.Edit(ctx, h, channels.Message{Kind: channels.KindTool, Key: l.Key, Text: l.Text})
			}
		default:
			continue // this adapter cannot edit it
		}
		if err := owner.EditAFewTimes(ctx, edit); err != nil {
			r.log.Warn("cannot show a message of a cut-off turn as cut off; left as it is", "thread", ref, "message", m.ID, "err", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), owner.WriteTimeout)
	defer cancel()
	if err := r.o.Store.SetOpenMessages(sctx, ref, nil); err != nil {
		r.log.Warn("cannot forget the messages of a cut-off turn", "thread", ref, "err", err)
	}
}
