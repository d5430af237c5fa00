package owner

import (
	"context"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// What a shutdown tells a thread: its turn cut off, its permission prompts
// and its agent's forms closed. The router's context ends first and the
// thread's lane stops with it (its undelivered output is dropped, as the
// next start tells), so these few are the one place where the owner calls
// the adapter itself: each once, within the shutdown's grace, on the
// thread's own context. Everything else the thread shows goes through its
// lane (dispatch.Runner), which alone reads the adapter's capabilities.

// tellInterrupted tells the thread, straight through the adapter (its
// lane stopped with the router's context), that the shutdown cut its
// turn off, within shutdownGrace. When that fails the turn's running mark
// stays in the store and the next start tells the thread.
func (t *Thread) tellInterrupted() {
	t.cut = true
	ctx, cancel := context.WithTimeout(t.ctx, t.d.Host.ShutdownGrace())
	defer cancel()
	err := PostWithin(ctx, t.ad, t.ref, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(sysmsg.Interrupted{})})
	if err != nil {
		t.d.Log.Warn("cannot tell the thread its turn was interrupted; the next start does", "thread", t.ref, "err", err)
	}
	t.told = err == nil
}

// expireAtShutdown settles p for a gateway that is shutting down: the
// agent gets the cancelled outcome at once, and the prompt's message is
// edited straight through the adapter (the thread's lane has stopped) to
// say the gateway restarted, without its buttons, within shutdownGrace. A
// prompt whose post is still under way is edited once its message is
// known (posted). The stored prompt stays pending until its message
// shows no buttons, so that the next start edits what the shutdown could
// not (Router.expireStalePrompts). It does I/O and blocks.
func (t *Thread) expireAtShutdown(p *pending) {
	p.closing = true
	if t.tr != nil {
		t.tr.PermissionAnswered(p.id, "", time.Now())
	}
	p.answer <- answered{}
	if p.msg.Known() {
		ctx, cancel := context.WithTimeout(t.ctx, t.d.Host.ShutdownGrace())
		defer cancel()
		t.expireMessageAtShutdown(ctx, p, p.msg)
	}
}

// expireMessageAtShutdown edits h, the message of p, which the shutdown
// settled, and records p expired once its buttons are gone.
func (t *Thread) expireMessageAtShutdown(ctx context.Context, p *pending, h channels.Handle) {
	ed, canEdit := channels.As[channels.Editor](t.ad)
	if canEdit {
		err := ed.Edit(ctx, h, channels.Message{Kind: channels.KindPermission, Text: sysmsg.Settled(p.text, sysmsg.Restarted{})})
		if err != nil && !errors.Is(err, channels.ErrMessageGone) {
			t.d.Log.Warn("cannot edit a permission prompt at shutdown; the next start does", "thread", t.ref, "err", err)
			return
		}
	}
	// Without Editor there are no buttons to take away.
	t.resolvePrompt(p.id, store.PromptExpired, "", "gateway shutdown")
	t.d.Log.Info("permission prompt expired at shutdown", "thread", t.ref, "prompt", p.id)
}

// foldFormAtShutdown edits h, a question's form, to the line text once,
// apart from the owner: the shutdown settled the question after the
// thread's lane stopped (with the router's context), so the edit is the
// adapter's own, like the permission prompts' (expireMessageAtShutdown).
// Where the adapter cannot edit, the form stays (its click is refused).
func (t *Thread) foldFormAtShutdown(h channels.Handle, text string) {
	ed, ok := channels.As[channels.Editor](t.ad)
	if !ok || !t.d.Host.Enter() {
		return
	}
	go func() {
		defer t.d.WG.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), WriteTimeout)
		defer cancel()
		err := ed.Edit(ctx, h, channels.Message{Kind: channels.KindNotice, Text: text})
		if err != nil && !errors.Is(err, channels.ErrMessageGone) {
			t.d.Log.Warn("cannot fold the agent's question at shutdown", "thread", t.ref, "err", err)
		}
	}()
}
