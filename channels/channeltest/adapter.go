package channeltest

import (
	"context"
	"fmt"
	"slices"

	"github.com/acpgw/gateway/channels"
)

// view is the adapter of a Recorder. It implements channels.Adapter and
// every capability interface the recorder fakes, and reports
// (channels.CapsReporter) those chosen in Options or by SetCaps since,
// so that channels.As and channels.CapsOf find exactly those.
type view struct{ r *Recorder }

var (
	_ channels.Adapter       = view{}
	_ channels.CapsReporter  = view{}
	_ channels.Editor        = view{}
	_ channels.Typer         = view{}
	_ channels.TypingStopper = view{}
	_ channels.Prompter      = view{}
	_ channels.Uploader      = view{}
	_ channels.Former        = view{}
	_ channels.Reactor       = view{}
)

func (a view) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	return a.r.run(ctx, h)
}

func (a view) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	return a.r.post(ctx, t, m)
}

func (a view) Limits() channels.Limits { return a.r.opts.Limits }

// Caps reports the capabilities chosen in Options, or by SetCaps since.
func (a view) Caps() channels.Caps {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	return a.r.caps
}

func (a view) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return a.r.edit(ctx, h, m)
}

func (a view) Typing(ctx context.Context, t channels.ThreadRef) error {
	return a.r.startTyping(ctx, t)
}

func (a view) StopTyping(ctx context.Context, t channels.ThreadRef) error {
	return a.r.stopTyping(ctx, t)
}

func (a view) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	return a.r.prompt(ctx, t, c)
}

func (a view) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	return a.r.upload(ctx, t, f)
}

func (a view) Form(ctx context.Context, t channels.ThreadRef, f channels.Form) (channels.Handle, error) {
	return a.r.form(ctx, t, f)
}

func (a view) React(ctx context.Context, h channels.Handle, emoji string) error {
	return a.r.react(ctx, h, emoji, false)
}

func (a view) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	return a.r.react(ctx, h, emoji, true)
}

func (a view) recorder() *Recorder { return a.r }

// capsOf returns the capabilities o chooses.
func capsOf(o Options) channels.Caps {
	return channels.Caps{
		Edit: o.Edit, Typing: o.Typing, StopTyping: o.Typing, Prompt: o.Prompt,
		Upload: o.Upload, Form: o.Form, React: o.React,
	}
}

// SetCaps changes the capabilities the adapter reports from now on, as
// an adapter whose platform grants or withdraws one at run time does.
// Those the recorder does not fake (Titler, History, …) stay absent
// whatever c says (channels.CapsOf).
func (r *Recorder) SetCaps(c channels.Caps) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.caps = c
}

// offLocked returns the error of call name (an Inject name, which is
// also the name of the call's capability in channels.Caps.Names, but for
// Post) when the adapter does not report its capability: a caller that
// did not ask channels.As, or asked before the capabilities changed.
func (r *Recorder) offLocked(name string, t channels.ThreadRef) error {
	if name == InjectPost || slices.Contains(r.caps.Names(), name) {
		return nil
	}
	return channels.Permanent(fmt.Errorf("channeltest: %s in %s: the adapter does not report this capability", name, t))
}
