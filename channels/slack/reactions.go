package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/acpgw/gateway/channels"
)

// Reactions (channels.Reactor): the app's reactions on messages
// (reactions.add, reactions.remove), and people's reactions in threads
// the app is in (reaction_added, reaction_removed) as Inbound.Reaction.

var _ channels.Reactor = (*Adapter)(nil)

// emojiNames maps the emoji the gateway uses to Slack's names.
var emojiNames = map[string]string{
	"👀":  "eyes",
	"⏳":  "hourglass_flowing_sand",
	"✅":  "white_check_mark",
	"❌":  "x",
	"⏹️": "black_square_for_stop",
	"⏹":  "black_square_for_stop",
	"🛑":  "octagonal_sign",
	"🤔":  "thinking_face",
	"🔥":  "fire",
	"⚠️": "warning",
	"⚠":  "warning",
}

// emojiOf maps Slack's names back to the emoji (the first of a pair
// with and without the variation selector wins).
var emojiOf = map[string]string{
	"eyes": "👀", "hourglass_flowing_sand": "⏳", "white_check_mark": "✅", "x": "❌",
	"black_square_for_stop": "⏹️", "octagonal_sign": "🛑", "thinking_face": "🤔", "fire": "🔥", "warning": "⚠️",
}

// minReactInterval paces the app's reactions: reactions.add and
// reactions.remove are Tier 3 (about 50 calls a minute per workspace).
const minReactInterval = 1200 * time.Millisecond

// slackEmoji returns Slack's name for emoji: a known emoji's name, or a
// name given as "name" or ":name:". It returns an error for any other
// emoji.
func slackEmoji(emoji string) (string, error) {
	if n, ok := emojiNames[emoji]; ok {
		return n, nil
	}
	name := strings.Trim(emoji, ":")
	if name == "" || len(name) > 100 || strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '+' || r == '\'')
	}) >= 0 {
		return "", channels.Permanent(fmt.Errorf("slack: no Slack name for the emoji %q", emoji))
	}
	return name, nil
}

// React adds the app's reaction emoji to message h (reactions.add). A
// reaction already there is no error. It blocks on I/O and returns a
// *channels.RateLimitError when Slack answers 429 or the adapter's pacing
// (Options.ReactionInterval: one reaction call per 1.2 s, Slack's Tier 3)
// asks to wait; nothing was done then.
func (a *Adapter) React(ctx context.Context, h channels.Handle, emoji string) error {
	return a.react(ctx, h, emoji, false)
}

// Unreact removes the app's reaction emoji from message h
// (reactions.remove). A reaction not there is no error. It blocks and
// paces like React.
func (a *Adapter) Unreact(ctx context.Context, h channels.Handle, emoji string) error {
	return a.react(ctx, h, emoji, true)
}

func (a *Adapter) react(ctx context.Context, h channels.Handle, emoji string, remove bool) error {
	name, err := slackEmoji(emoji)
	if err != nil {
		return err
	}
	if err := a.paceReaction(time.Now()); err != nil {
		return err
	}
	item := slack.NewRefToMessage(h.Thread.Channel, string(h.ID))
	method := "reactions.add"
	if remove {
		method = "reactions.remove"
		err = a.api.RemoveReactionContext(ctx, name, item)
	} else {
		err = a.api.AddReactionContext(ctx, name, item)
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok && (se.Err == "already_reacted" || se.Err == "no_reaction") {
		return nil
	}
	return a.apiErr(method, err)
}

// paceReaction reserves the next reaction call at now, or returns a
// *channels.RateLimitError saying how long until it is free.
func (a *Adapter) paceReaction(now time.Time) error {
	return a.reserve(now, &a.nextReaction, cmp.Or(a.o.ReactionInterval, minReactInterval), "reaction (pacing)")
}

// fromReaction builds the Inbound of a person's reaction_added or
// reaction_removed on a message of a thread the app is in, placed by the
// messages the adapter saw or posted. Reactions on other messages, and
// the app's own, are dropped. Its ID is the event's event_id, which a
// redelivery keeps.
func (a *Adapter) fromReaction(ctx context.Context, ev event, eventID, team string, me Capabilities) (channels.Inbound, bool) {
	if ev.User == "" || (me.BotUserID != "" && string(ev.User) == me.BotUserID) || ev.Item.Type != "message" {
		return channels.Inbound{}, false
	}
	channel, ts := string(ev.Item.Channel), string(ev.Item.TS)
	thread, ok := a.seen.threadOf(channel, ts)
	if !ok {
		return channels.Inbound{}, false
	}
	ref := channels.ThreadRef{Platform: Platform, Channel: channel, Thread: thread}
	if !a.isBound(ctx, ref) {
		return channels.Inbound{}, false
	}
	emoji := string(ev.Reaction)
	if e, ok := emojiOf[emoji]; ok {
		emoji = e
	}
	return channels.Inbound{
		Thread:   ref,
		ID:       channels.MessageID(eventID),
		Author:   a.author(ctx, ev),
		Reaction: &channels.Reaction{Message: channels.MessageID(ts), Emoji: emoji, Removed: ev.Type == "reaction_removed"},
		Space:    team,
		Reply:    a.ephemeral(channel, thread, string(ev.User)),
	}, true
}
