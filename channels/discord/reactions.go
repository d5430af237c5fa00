package discord

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// React adds the app's reaction emoji (the emoji itself, or a custom
// one's "name:id") to message h. It blocks on I/O and returns a
// *channels.RateLimitError when Discord asks to wait (reactions have a
// small bucket of their own).
func (a *Adapter) React(ctx context.Context, h channels.Handle, emoji string) error {
	ch, e, err := reactionTarget(h, emoji)
	if err != nil {
		return err
	}
	if err := a.s.MessageReactionAdd(ch, string(h.ID), e, requestOptions(ctx)...); err != nil {
		return apiError("react", err)
	}
	return nil
}

// Unreact removes the app's reaction emoji from message h. It blocks on
// I/O and returns a *channels.RateLimitError when Discord asks to wait.
func (a *Adapter) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	ch, e, err := reactionTarget(h, emoji)
	if err != nil {
		return err
	}
	if err := a.s.MessageReactionRemove(ch, string(h.ID), e, "@me", requestOptions(ctx)...); err != nil {
		return apiError("react", err)
	}
	return nil
}

// reactionTarget returns the channel of h's message and emoji escaped for
// the path of a reaction's URL. A thread opened from a message has that
// message's id, and the message (the mention that opened it) lives in the
// parent channel, not in the thread: Discord answers Unknown Message to a
// reaction on it through the thread.
func reactionTarget(h channels.Handle, emoji string) (string, string, error) {
	ch, err := channelOf(h.Thread)
	if err != nil {
		return "", "", err
	}
	if !h.Known() {
		return "", "", channels.Permanent(errors.New("discord: react: the handle has no message id"))
	}
	if string(h.ID) == ch && h.Thread.Channel != "" {
		ch = h.Thread.Channel // the thread's starter message
	}
	emoji = strings.TrimSpace(emoji)
	if emoji == "" {
		return "", "", channels.Permanent(errors.New("discord: react: no emoji"))
	}
	return ch, url.PathEscape(emoji), nil
}

// ownThread reports, from what the adapter already knows (no I/O), whether
// id is a thread of the gateway's whose parent is channel.
func (a *Adapter) ownThread(id, channel string) bool {
	p, ok := a.places.lookup(id)
	return ok && p.thread() && p.parent == channel && (p.owner == a.botID() || a.places.isBound(id))
}

// reacted is a reaction event as the adapter reads it.
type reacted struct {
	channel string
	guild   string
	message string
	emoji   string
	user    string
	member  *discordgo.Member
	removed bool
	// dispatch names the gateway dispatch that carried the event: the
	// session's id and the dispatch's sequence number.
	dispatch string
}

// readReaction turns a MESSAGE_REACTION_ADD or _REMOVE into a reacted. It
// returns false when the event lacks what delivery needs.
func readReaction(r *discordgo.MessageReaction, member *discordgo.Member, removed bool) (reacted, bool) {
	if r == nil || r.UserID == "" || r.MessageID == "" || r.ChannelID == "" {
		return reacted{}, false
	}
	e := r.Emoji.Name
	if r.Emoji.ID != "" {
		e = r.Emoji.Name + ":" + r.Emoji.ID // a custom emoji, as React takes it
	}
	if e == "" {
		return reacted{}, false
	}
	return reacted{channel: r.ChannelID, guild: r.GuildID, message: r.MessageID, emoji: e, user: r.UserID, member: member, removed: removed}, true
}

// id is the reaction event's Inbound.ID, by which a cluster's inbound
// stream stores it once. Discord gives the event no id, so it is made of
// what the event says (message, user, added or removed, emoji) and of
// the dispatch that carried it (session and sequence number): a reaction
// removed and added again is a new event, while Discord's replay of a
// dispatch when a session resumes carries the same sequence number and
// is the same. It is not a message id.
func (rc reacted) id() channels.MessageID {
	op := "add"
	if rc.removed {
		op = "remove"
	}
	return channels.MessageID("reaction/" + rc.message + "/" + rc.user + "/" + op + "/" + rc.emoji + "/" + rc.dispatch)
}

// onReactionEvent reads a MESSAGE_REACTION_ADD or _REMOVE dispatch (its
// struct decoded by discordgo) and queues it for delivery.
func (a *Adapter) onReactionEvent(e *discordgo.Event) {
	var rc reacted
	var ok bool
	switch d := e.Struct.(type) {
	case *discordgo.MessageReactionAdd:
		rc, ok = readReaction(d.MessageReaction, d.Member, false)
	case *discordgo.MessageReactionRemove:
		rc, ok = readReaction(d.MessageReaction, nil, true)
	}
	if !ok {
		return
	}
	a.mu.Lock()
	rc.dispatch = a.gwSession + ":" + strconv.FormatInt(e.Sequence, 10)
	a.mu.Unlock()
	a.onReaction(rc)
}

// onReaction queues a reaction for delivery, in order with its channel's
// messages.
func (a *Adapter) onReaction(rc reacted) {
	r := a.current()
	if r == nil || rc.user == a.botID() {
		return
	}
	if !r.lanes.Do(rc.channel, func() { a.deliverReaction(r, rc) }) {
		a.log.Warn("discord: inbound backlog full; reaction dropped", "channel", rc.channel)
	}
}

// deliverReaction hands a reaction in a thread the gateway is part of (or
// a DM, when DMs are on) to the Run's handler as Inbound.Reaction.
func (a *Adapter) deliverReaction(r *running, rc reacted) {
	ctx := r.ctx
	if ctx.Err() != nil {
		return
	}
	ref := channels.ThreadRef{Platform: Platform, Channel: rc.channel, Thread: rc.channel}
	if rc.guild == "" {
		if !a.o.DMs {
			return
		}
	} else {
		p, err := a.place(ctx, rc.channel)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("discord: cannot look up a reaction's channel", "channel", rc.channel, "err", err)
			}
			return
		}
		switch {
		case !p.thread() && a.ownThread(rc.message, rc.channel):
			// On the message that opened a thread of the gateway's:
			// it lives in the parent channel, and its thread has its id.
			ref.Thread = rc.message
		case !p.thread() || (p.owner != a.botID() && !a.places.isBound(rc.channel)):
			return // not a thread of the gateway's
		case p.parent != "":
			ref.Channel = p.parent
		}
	}
	var u *discordgo.User
	if rc.member == nil || rc.member.User == nil {
		u = &discordgo.User{ID: rc.user}
	}
	who := author(u, rc.member)
	who.ID = rc.user
	r.h(ctx, channels.Inbound{
		Thread:   ref,
		ID:       rc.id(),
		Author:   who,
		Space:    rc.guild,
		Reaction: &channels.Reaction{Message: channels.MessageID(rc.message), Emoji: rc.emoji, Removed: rc.removed},
	})
}
