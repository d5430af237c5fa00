package discord

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// The values of Options.ToolStyle (channels.discord.toolStyle).
const (
	// ToolLines shows each tool call as a message of its own.
	ToolLines = "lines"
	// ToolCard shows a run of tool calls as the rows of one card.
	ToolCard = "card"
)

// Limits of a Components V2 message, as Discord documents them.
const (
	// maxCardComponents is how many components a message holds in all,
	// nested ones included: the container and its text displays.
	maxCardComponents = 40
	// maxCardChars is the text all of a message's text displays hold
	// together.
	maxCardChars = 4000
	// maxRowChars bounds one row, so a long tool line leaves room for
	// the others.
	maxRowChars = 500
)

// Cards reports whether tool calls show as cards (Options.ToolStyle).
func (a *Adapter) Cards() bool { return a.o.ToolStyle == ToolCard }

// Card posts (h zero) or edits (h) a progress card in t: a Components V2
// message (flag IS_COMPONENTS_V2) of one container with a text display per
// row, in order. Such a message carries no content, so text stays in
// classic messages. When the rows do not fit Discord's limits of a V2
// message (40 components, 4,000 characters of text), the oldest give way
// to one line that counts them. It blocks on I/O; its errors are those of
// Post and Edit.
func (a *Adapter) Card(ctx context.Context, t channels.ThreadRef, h channels.Handle, rows []channels.Message) (channels.Handle, error) {
	ch, err := channelOf(t)
	if err != nil {
		return channels.Handle{}, err
	}
	comps := cardComponents(rows)
	if comps == nil {
		return channels.Handle{}, channels.Permanent(errors.New("discord: card: no rows"))
	}
	if h == (channels.Handle{}) {
		msg, err := a.s.ChannelMessageSendComplex(ch, &discordgo.MessageSend{
			Components:      comps,
			Flags:           discordgo.MessageFlagsIsComponentsV2,
			AllowedMentions: noMentions(),
		}, requestOptions(ctx)...)
		if err != nil {
			return channels.Handle{}, apiError("card", err)
		}
		return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
	}
	if !h.Known() {
		return channels.Handle{}, fmt.Errorf("discord: card: the handle has no message id: %w", channels.ErrMessageGone)
	}
	_, err = a.s.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID:              string(h.ID),
		Channel:         ch,
		Components:      &comps,
		Flags:           discordgo.MessageFlagsIsComponentsV2,
		AllowedMentions: noMentions(),
	}, requestOptions(ctx)...)
	if err != nil {
		return channels.Handle{}, editError(err)
	}
	return h, nil
}

// cardComponents lays rows out as one container of text displays within
// Discord's limits, keeping the newest rows; nil when no row has text.
func cardComponents(rows []channels.Message) []discordgo.MessageComponent {
	var texts []string
	for _, r := range rows {
		if s := render(channels.Message{Kind: channels.KindTool, Text: r.Text}); s != "" {
			texts = append(texts, clip(s, maxRowChars))
		}
	}
	if len(texts) == 0 {
		return nil
	}
	// Keep the newest rows that fit, with room for the line that counts
	// the others.
	const room = 1 + 1 // the container, and that line
	keep, chars := 0, 60
	for i := len(texts) - 1; i >= 0; i-- {
		n := utf8.RuneCountInString(texts[i])
		if keep+room >= maxCardComponents || chars+n > maxCardChars {
			break
		}
		keep++
		chars += n
	}
	var inner []discordgo.MessageComponent
	if hidden := len(texts) - keep; hidden > 0 {
		inner = append(inner, discordgo.TextDisplay{Content: "-# … " + strconv.Itoa(hidden) + " earlier tool calls"})
	}
	for _, s := range texts[len(texts)-keep:] {
		inner = append(inner, discordgo.TextDisplay{Content: s})
	}
	return []discordgo.MessageComponent{discordgo.Container{Components: inner}}
}
