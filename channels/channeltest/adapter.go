package channeltest

import (
	"context"

	"github.com/acpgw/gateway/channels"
)

// The adapter view of a Recorder is one of sixteen small types, one per
// capability combination, so that a type assertion for a capability that is
// not enabled fails. Each combination embeds the method sets it offers.

// base carries the methods of channels.Adapter.
type base struct{ r *Recorder }

func (a base) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	return a.r.run(ctx, h)
}

func (a base) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	return a.r.post(ctx, t, m)
}

func (a base) Limits() channels.Limits { return a.r.opts.Limits }

// editor carries channels.Editor.
type editor struct{ r *Recorder }

func (a editor) Edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	return a.r.edit(ctx, h, m)
}

// typer carries channels.Typer and channels.TypingStopper.
type typer struct{ r *Recorder }

func (a typer) Typing(ctx context.Context, t channels.ThreadRef) error {
	return a.r.startTyping(ctx, t)
}

func (a typer) StopTyping(ctx context.Context, t channels.ThreadRef) error {
	return a.r.stopTyping(ctx, t)
}

// prompter carries channels.Prompter.
type prompter struct{ r *Recorder }

func (a prompter) Prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	return a.r.prompt(ctx, t, c)
}

// uploader carries channels.Uploader.
type uploader struct{ r *Recorder }

func (a uploader) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	return a.r.upload(ctx, t, f)
}

type (
	adapterE struct {
		base
		editor
	}
	adapterT struct {
		base
		typer
	}
	adapterP struct {
		base
		prompter
	}
	adapterET struct {
		base
		editor
		typer
	}
	adapterEP struct {
		base
		editor
		prompter
	}
	adapterTP struct {
		base
		typer
		prompter
	}
	adapterETP struct {
		base
		editor
		typer
		prompter
	}
)

var (
	_ channels.Adapter       = base{}
	_ channels.Editor        = editor{}
	_ channels.Typer         = typer{}
	_ channels.TypingStopper = typer{}
	_ channels.Prompter      = prompter{}
	_ channels.Uploader      = uploader{}
)

// The combinations with channels.Uploader.
type (
	adapterU struct {
		base
		uploader
	}
	adapterEU struct {
		adapterE
		uploader
	}
	adapterTU struct {
		adapterT
		uploader
	}
	adapterPU struct {
		adapterP
		uploader
	}
	adapterETU struct {
		adapterET
		uploader
	}
	adapterEPU struct {
		adapterEP
		uploader
	}
	adapterTPU struct {
		adapterTP
		uploader
	}
	adapterETPU struct {
		adapterETP
		uploader
	}
)

func newAdapter(r *Recorder, o Options) channels.Adapter {
	a := newAdapterU(r, o)
	if o.Form {
		return withForm(r, a)
	}
	return a
}

// newAdapterU returns the combination of Edit, Typing, Prompt and Upload.
func newAdapterU(r *Recorder, o Options) channels.Adapter {
	a := newAdapterETP(r, o)
	if !o.Upload {
		return a
	}
	u := uploader{r}
	switch a := a.(type) {
	case adapterETP:
		return adapterETPU{a, u}
	case adapterET:
		return adapterETU{a, u}
	case adapterEP:
		return adapterEPU{a, u}
	case adapterTP:
		return adapterTPU{a, u}
	case adapterE:
		return adapterEU{a, u}
	case adapterT:
		return adapterTU{a, u}
	case adapterP:
		return adapterPU{a, u}
	default:
		return adapterU{base{r}, u}
	}
}

// newAdapterETP returns the combination of Edit, Typing and Prompt.
func newAdapterETP(r *Recorder, o Options) channels.Adapter {
	b, e, t, p := base{r}, editor{r}, typer{r}, prompter{r}
	switch {
	case o.Edit && o.Typing && o.Prompt:
		return adapterETP{b, e, t, p}
	case o.Edit && o.Typing:
		return adapterET{b, e, t}
	case o.Edit && o.Prompt:
		return adapterEP{b, e, p}
	case o.Typing && o.Prompt:
		return adapterTP{b, t, p}
	case o.Edit:
		return adapterE{b, e}
	case o.Typing:
		return adapterT{b, t}
	case o.Prompt:
		return adapterP{b, p}
	default:
		return b
	}
}
