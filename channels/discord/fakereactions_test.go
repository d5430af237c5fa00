package discord

import (
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// intentReactions is GUILD_MESSAGE_REACTIONS (the fake's copy).
const intentReactions discordIntent = 1 << 10

// botReaction is PUT or DELETE
// /channels/{channel}/messages/{id}/reactions/{emoji}/@me. The emoji must
// come URL-escaped: the raw path may hold no byte outside ASCII.
func (f *fakeDiscord) botReaction(w http.ResponseWriter, r *http.Request, channel, msg, emoji string) {
	for _, b := range []byte(r.RequestURI) {
		if b >= 0x80 {
			f.violate("reaction path not URL-escaped: %q", r.RequestURI)
			break
		}
	}
	if emoji == "" || !utf8.ValidString(emoji) || strings.ContainsAny(emoji, "/ ") {
		writeError(w, 400, 10014, "Unknown Emoji")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[msg]
	if !ok || m.Channel != channel {
		writeError(w, 404, 10008, "Unknown Message")
		return
	}
	if f.reactions == nil {
		f.reactions = map[string][]string{}
	}
	has := slices.Contains(f.reactions[msg], emoji)
	switch {
	case r.Method == "PUT" && !has:
		f.reactions[msg] = append(f.reactions[msg], emoji)
	case r.Method == "DELETE" && has:
		f.reactions[msg] = slices.DeleteFunc(f.reactions[msg], func(e string) bool { return e == emoji })
	}
	f.changedLocked()
	w.WriteHeader(http.StatusNoContent)
}

// botReactions returns the bot's reactions on message msg.
func (f *fakeDiscord) botReactions(msg string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reactions[msg])
}

// react makes who add (or remove) a reaction emoji ("name:id" for a custom
// one) on message msg in channel. Like Discord, it sends nothing to a
// client that did not ask for the reactions intent.
func (f *fakeDiscord) react(who fakeUser, channel, msg, emoji string, removed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.intents&intentReactions == 0 {
		return
	}
	e := map[string]any{"name": emoji, "id": nil}
	if name, id, ok := strings.Cut(emoji, ":"); ok {
		e = map[string]any{"name": name, "id": id}
	}
	d := map[string]any{"user_id": who.ID, "message_id": msg, "channel_id": channel, "emoji": e}
	if ch := f.chans[channel]; ch != nil && ch.Guild != "" {
		d["guild_id"] = ch.Guild
		if !removed {
			d["member"] = map[string]any{"user": userJSON(who), "roles": nonNil(who.Roles)}
		}
	}
	t := "MESSAGE_REACTION_ADD"
	if removed {
		t = "MESSAGE_REACTION_REMOVE"
	}
	f.dispatchLocked(t, d)
}
