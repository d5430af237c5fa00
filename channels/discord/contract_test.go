package discord

import (
	"context"
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
			MissingID: "1099999999999999999",
			TypingShown: func(context.Context) (bool, error) {
				return f.typingShown(f.thread), nil
			},
		}
	})
}
