package discord

import (
	"cmp"
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
// (system messages left out, mentions of the bot removed), and the bot's
// own messages marked Author.Self (and Meta where they carry metaFlags,
// components or a card: not the agent's text). A thread started from a
// channel message holds, first, Discord's THREAD_STARTER_MESSAGE, which
// points at that message (in the parent channel, with the thread's id):
// the message itself takes its place, as Discord includes it (or, where
// it does not, read with GET /channels/{parent}/messages/{id}; one
// deleted is left out). Discord's messages carry no member, so the roles of each
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
		if m.Type == discordgo.MessageTypeThreadStarterMessage {
			if m = a.starter(ctx, t, m); m == nil {
				continue
			}
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
		self := bot != "" && m.Author != nil && m.Author.ID == bot
		if self {
			page.Messages = append(page.Messages, a.own(t, m))
			continue
		}
		in, ok := readMessage(m, bot, role)
		if !ok {
			continue
		}
		page.Messages = append(page.Messages, a.inbound(t, in))
	}
	return page, nil
}

// own is the bot's own message m of thread t, as History returns it:
// its text, marked Author.Self, and Meta when it is not the agent's text
// (posted with metaFlags, or with components: a prompt, a form, a card).
func (a *Adapter) own(t channels.ThreadRef, m *discordgo.Message) channels.Inbound {
	return channels.Inbound{
		Thread: t,
		Author: channels.Author{ID: m.Author.ID, Name: cmp.Or(m.Author.GlobalName, m.Author.Username), Bot: true, Self: true},
		Text:   m.Content,
		ID:     channels.MessageID(m.ID),
		Space:  m.GuildID,
		Time:   m.Timestamp,
		Meta:   m.Flags&(metaFlags|discordgo.MessageFlagsIsComponentsV2) != 0 || len(m.Components) > 0,
	}
}

// starter returns the channel message that thread t was started from,
// which Discord's THREAD_STARTER_MESSAGE m points at: the one Discord
// includes, else read from its channel. It returns nil when there is
// none (the message was deleted) or it cannot be read (logged).
func (a *Adapter) starter(ctx context.Context, t channels.ThreadRef, m *discordgo.Message) *discordgo.Message {
	if s := m.ReferencedMessage; s != nil && s.ID != "" {
		return s
	}
	r := m.MessageReference
	if r == nil || r.MessageID == "" || r.ChannelID == "" {
		return nil
	}
	s, err := a.s.ChannelMessage(r.ChannelID, r.MessageID, requestOptions(ctx)...)
	if err != nil {
		if restCode(err) != codeUnknownMessage {
			a.log.Warn("discord: cannot read the message a thread was started from; its context goes without it",
				"thread", t, "message", r.MessageID, "err", err)
		}
		return nil
	}
	return s
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
