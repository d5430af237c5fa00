package discord

import (
	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// onThreadDelete hands a deleted thread (THREAD_DELETE) to the Run's
// handler as Inbound.Closed without an author (Discord's own word),
// after the messages of that thread queued before it: its agent stops,
// its binding and workspace go.
func (a *Adapter) onThreadDelete(c *discordgo.Channel) {
	if c == nil || c.ID == "" {
		return
	}
	parent := c.ParentID
	if parent == "" {
		parent = c.ID // never seen without one; keep the ref usable
	}
	a.closed(c.ID, channels.Inbound{Thread: channels.ThreadRef{Platform: Platform, Channel: parent, Thread: c.ID}, Closed: true, Space: c.GuildID})
}

// onChannelDelete hands a deleted channel (CHANNEL_DELETE) to the Run's
// handler as Inbound.Closed with no thread: every thread of it the
// gateway knows ends.
func (a *Adapter) onChannelDelete(c *discordgo.Channel) {
	if c == nil || c.ID == "" || c.IsThread() {
		return
	}
	a.closed(c.ID, channels.Inbound{Thread: channels.ThreadRef{Platform: Platform, Channel: c.ID}, Closed: true, Space: c.GuildID})
}

// closed queues in on the lane of channel id.
func (a *Adapter) closed(id string, in channels.Inbound) {
	r := a.current()
	if r == nil {
		return
	}
	if !r.lanes.Do(id, func() {
		if r.ctx.Err() == nil {
			r.h(r.ctx, in)
		}
	}) {
		a.log.Warn("discord: inbound backlog full; deletion dropped", "channel", id)
	}
}
