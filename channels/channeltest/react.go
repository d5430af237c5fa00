package channeltest

import (
	"context"
	"fmt"
	"slices"

	"github.com/acpgw/gateway/channels"
)

// InjectReact names React and Unreact for Recorder.Inject.
const InjectReact = "react"

// react implements channels.Reactor: the op is "react" or "unreact", the
// emoji in Op.Text. Adding an emoji there, or removing one not there, is
// no error and changes nothing, as on the platforms. Any message id of
// the thread may carry reactions (people's messages are not recorded as
// messages).
func (r *Recorder) react(ctx context.Context, h channels.Handle, emoji string, remove bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Op: "react", Msg: h.ID, Text: emoji}
	if remove {
		op.Op = "unreact"
	}
	err := r.checkLocked(ctx, InjectReact, h.Thread)
	if err == nil && (h.ID == "" || emoji == "") {
		err = channels.Permanent(fmt.Errorf("channeltest: %s %q on %q: no message or no emoji", op.Op, emoji, h.ID))
	}
	if err != nil {
		r.logLocked(h.Thread, op, err)
		return err
	}
	if r.reactions == nil {
		r.reactions = map[channels.MessageID][]string{}
	}
	have := r.reactions[h.ID]
	switch i := slices.Index(have, emoji); {
	case remove && i >= 0:
		r.reactions[h.ID] = slices.Delete(have, i, i+1)
	case !remove && i < 0:
		r.reactions[h.ID] = append(have, emoji)
	}
	r.logLocked(h.Thread, op, nil)
	return nil
}

// Reactions returns the app's reactions on message id, in the order
// added.
func (r *Recorder) Reactions(id channels.MessageID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reactions[id])
}
