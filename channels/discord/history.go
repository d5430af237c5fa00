package discord

import (
	"context"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// maxHistoryPage is the most messages Discord returns for one read.
const maxHistoryPage = 100

var _ channels.History = (*Adapter)(nil)

// MessagesAfter reads up to limit (at most 100) messages of thread t
// posted after the message after, with GET /channels/{thread}/messages,
// and returns those Run would deliver, oldest first, as Run delivers them
// (the bot's own and system messages left out, mentions of the bot
// removed). Discord's messages carry no member, so the roles of each
// author in a guild are read once per page (GET /guilds/{g}/members/{u}).
// It blocks on I/O and returns a *channels.RateLimitError when Discord
// asks to wait.
func (a *Adapter) MessagesAfter(ctx context.Context, t channels.ThreadRef, after channels.MessageID, limit int) (channels.Page, error) {
	ch, err := channelOf(t)
	if err != nil {
		return channels.Page{}, err
	}
	limit = min(max(limit, 1), maxHistoryPage)
	ms, err := a.s.ChannelMessages(ch, limit, "", string(after), "", requestOptions(ctx)...)
	if err != nil {
		return channels.Page{}, apiError("history", err)
	}
	if t.Channel == t.Thread && !a.o.DMs {
		return channels.Page{}, nil // direct messages are off: Run delivers none
	}
	guild := ""
	if t.Channel != t.Thread { // a thread of a guild channel, not a DM
		p, err := a.place(ctx, ch)
		if err != nil {
			return channels.Page{}, err
		}
		guild = p.guild
	}
	// Discord answers newest first.
	slices.SortFunc(ms, func(x, y *discordgo.Message) int { return compareIDs(x.ID, y.ID) })
	page := channels.Page{More: len(ms) == limit}
	if len(ms) > 0 {
		page.Last = channels.MessageID(ms[len(ms)-1].ID)
	}
	members := map[string]*discordgo.Member{}
	bot, role := a.botID(), a.places.botRole(guild)
	for _, m := range ms {
		if m == nil || (after != "" && compareIDs(m.ID, string(after)) <= 0) {
			continue
		}
		m.GuildID = guild
		if m.ChannelID == "" {
			m.ChannelID = ch
		}
		if guild != "" && m.Member == nil && m.Author != nil && !m.Author.Bot && m.Author.ID != bot {
			mem, ok := members[m.Author.ID]
			if !ok {
				mem, err = a.s.GuildMember(guild, m.Author.ID, requestOptions(ctx)...)
				if err != nil {
					a.log.Warn("discord: cannot read a member's roles; their message is judged without them",
						"guild", guild, "user", m.Author.ID, "err", err)
					mem = nil
				}
				members[m.Author.ID] = mem
			}
			m.Member = mem
		}
		in, ok := readMessage(m, bot, role)
		if !ok {
			continue
		}
		page.Messages = append(page.Messages, channels.Inbound{
			Thread:  t,
			Author:  in.author,
			Text:    in.text,
			Command: channels.ParseCommand(in.text),
			Files:   in.files,
			Fetch:   a.fetcher(in.files),
			ID:      channels.MessageID(in.id),
			Space:   in.guild,
			Time:    in.time,
		})
	}
	return page, nil
}

// compareIDs orders Discord snowflakes (decimal numbers of up to 20
// digits) as numbers.
func compareIDs(x, y string) int {
	if len(x) != len(y) {
		return len(x) - len(y)
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
