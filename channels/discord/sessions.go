package discord

import (
	"context"
	"strconv"

	"github.com/acpgw/gateway/channels"
)

// Sessions receives a value each time the gateway connection starts a
// new session (READY: the adapter's first connection, or a fresh
// IDENTIFY after Discord refused to resume), never for a resumed one:
// what was sent to the bot's guilds between the sessions is not sent
// again, and it is read from the history of the threads: by the router
// in `gateway run` (session's catch-up), by a cluster edge for the
// threads it serves (cluster/edge's catch-up). One value may stand for
// several sessions; it is sent on READY before the health says
// connected (channels.NewSessions).
func (a *Adapter) Sessions() <-chan struct{} { return a.sessions }

// newSession tells Sessions, without waiting.
func (a *Adapter) newSession() {
	select {
	case a.sessions <- struct{}{}:
	default:
	}
}

// Serves reports whether this adapter's connection gets the live
// messages of t: Discord sends a guild's events to shard
// (guild_id >> 22) % count, and direct messages to shard 0. It may ask
// Discord for t's channel; false when it cannot tell.
func (a *Adapter) Serves(ctx context.Context, t channels.ThreadRef) bool {
	if t.Platform != Platform {
		return false
	}
	if t.Channel == t.Thread { // a direct message
		return a.o.DMs && a.o.Shard.ID == 0
	}
	p, err := a.place(ctx, t.Channel)
	if err != nil || p.guild == "" {
		if ctx.Err() == nil {
			a.log.Warn("discord: cannot tell the guild of a thread to catch up on", "thread", t, "err", err)
		}
		return false
	}
	return shardOf(p.guild, a.o.Shard.Count) == a.o.Shard.ID
}

// shardOf is the shard that gets guild's events, of count.
func shardOf(guild string, count int) int {
	id, err := strconv.ParseUint(guild, 10, 64)
	if err != nil || count <= 1 {
		return 0
	}
	return int((id >> 22) % uint64(count))
}
