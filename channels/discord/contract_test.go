package discord

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// asUser turns a contract author into a person of the fake.
func asUser(a channels.Author) fakeUser {
	return fakeUser{ID: a.ID, Name: a.Name, Bot: a.Bot, Roles: a.Roles}
}

func TestContract(t *testing.T) {
	for _, style := range []string{ToolLines, ToolCard} {
		t.Run(style, func(t *testing.T) { contract(t, style) })
	}
}

func contract(t *testing.T, style string) {
	channeltest.RunContract(t, func(t *testing.T) channeltest.Harness {
		f := newFake(t)
		a := f.adapter(t, Options{ToolStyle: style})
		t.Cleanup(func() {
			if v := f.Violations(); len(v) > 0 {
				t.Errorf("fake discord saw protocol misuse: %q", v)
			}
		})
		return channeltest.Harness{
			Adapter: a,
			Thread:  f.threadRef(),
			Inject: func(_ context.Context, who channels.Author, text string) error {
				f.say(asUser(who), f.thread, text, false)
				return nil
			},
			Click: func(_ context.Context, who channels.Author, h channels.Handle, optionID string) error {
				f.click(asUser(who), h.Thread.Thread, string(h.ID), optionID)
				return nil
			},
			Seen: func(_ context.Context, id channels.MessageID) (string, error) {
				// What a person sees: the content, or a card's rows.
				m, ok := f.message(string(id))
				if rows, card := cardRows(m); ok && card {
					return strings.Join(rows, "\n"), nil
				}
				return f.content(string(id))
			},
			SeenUpload: func(_ context.Context, h channels.Handle) (channels.Upload, error) {
				m, ok := f.message(string(h.ID))
				switch {
				case !ok:
					return channels.Upload{}, fmt.Errorf("fake discord: no message %s", h.ID)
				case m.Channel != f.thread:
					return channels.Upload{}, fmt.Errorf("fake discord: message %s is in channel %s, not the thread %s", h.ID, m.Channel, f.thread)
				case len(m.Files) != 1:
					return channels.Upload{}, fmt.Errorf("fake discord: message %s has %d files, want 1", h.ID, len(m.Files))
				}
				file := m.Files[0]
				return channels.Upload{Name: file.Name, ContentType: file.ContentType, Data: file.Body, Caption: m.Content}, nil
			},
			MissingID: "1099999999999999999",
			TypingShown: func(context.Context) (bool, error) {
				return f.typingShown(f.thread), nil
			},
		}
	})
}
