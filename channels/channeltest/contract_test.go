package channeltest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// recorderHarness connects the contract suite to a fresh Recorder.
func recorderHarness(o Options) func(t *testing.T) Harness {
	return func(t *testing.T) Harness {
		r := New(o)
		thread := r.Thread("contract")
		var inbound atomic.Int64
		return Harness{
			Adapter: r.Adapter(),
			Thread:  thread,
			Inject: func(ctx context.Context, a channels.Author, text string) error {
				id := channels.MessageID(fmt.Sprintf("in%d", inbound.Add(1)))
				return r.Deliver(ctx, channels.Inbound{Thread: thread, Author: a, Text: text, ID: id})
			},
			Click:      r.Click,
			AnswerForm: r.AnswerForm,
			Seen: func(_ context.Context, id channels.MessageID) (string, error) {
				m, ok := r.Message(id)
				if !ok {
					return "", fmt.Errorf("seen %q: %w", id, channels.ErrMessageGone)
				}
				// The recorder keeps what dispatch sent; a person sees it
				// as the platforms' adapters show it.
				return channels.TrimLead(m.Text), nil
			},
			TypingShown: func(context.Context) (bool, error) { return r.TypingShown(thread), nil },
			SeenUpload: func(_ context.Context, h channels.Handle) (channels.Upload, error) {
				m, ok := r.Message(h.ID)
				if !ok || m.File == nil {
					return channels.Upload{}, fmt.Errorf("seen upload %q: no file", h.ID)
				}
				f := *m.File
				f.ContentType = f.Type()
				return f, nil
			},
		}
	}
}

// combos returns all thirty-two capability combinations, alternating between a
// limited and an unlimited message length.
func combos() []Options {
	var out []Options
	for i := range 32 {
		o := Options{Edit: i&1 != 0, Typing: i&2 != 0, Prompt: i&4 != 0, Upload: i&8 != 0, Form: i&16 != 0}
		if i%2 == 0 || i == 7 || i == 15 {
			o.Limits = channels.Limits{MaxMessageChars: 2000, MaxLines: 20}
		}
		if o.Upload {
			o.Limits.MaxUploadBytes = 1 << 20
		}
		out = append(out, o)
	}
	return out
}

func comboName(o Options) string {
	name := "base"
	if o.Edit {
		name += "+edit"
	}
	if o.Typing {
		name += "+typing"
	}
	if o.Prompt {
		name += "+prompt"
	}
	if o.Upload {
		name += "+upload"
	}
	if o.Form {
		name += "+form"
	}
	if o.Limits.MaxMessageChars > 0 {
		name += fmt.Sprintf("/max%d", o.Limits.MaxMessageChars)
	}
	return name
}

func TestContractRecorder(t *testing.T) {
	for _, o := range combos() {
		t.Run(comboName(o), func(t *testing.T) {
			RunContract(t, recorderHarness(o))
		})
	}
}

// TestContractRecorderReact runs the contract on the recorder with
// reactions, a person's reaction delivered as Inbound.Reaction.
func TestContractRecorderReact(t *testing.T) {
	for _, upload := range []bool{false, true} {
		o := Options{Edit: true, Typing: true, Prompt: true, Upload: upload, React: true}
		if upload {
			o.Limits.MaxUploadBytes = 1 << 20
		}
		t.Run(comboName(o), func(t *testing.T) {
			RunContract(t, func(t *testing.T) Harness {
				h := recorderHarness(o)(t)
				r := h.Adapter.(interface{ recorder() *Recorder }).recorder()
				h.Reactions = func(_ context.Context, hd channels.Handle) ([]string, error) { return r.Reactions(hd.ID), nil }
				h.React = func(ctx context.Context, a channels.Author, hd channels.Handle, emoji string) error {
					return r.Deliver(ctx, channels.Inbound{Thread: hd.Thread, Author: a, Reaction: &channels.Reaction{Message: hd.ID, Emoji: emoji}})
				}
				return h
			})
		})
	}
}
