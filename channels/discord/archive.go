package discord

import (
	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// onThreadUpdate hands a thread that was archived (THREAD_UPDATE with
// thread_metadata.archived) to the Run's handler as Inbound.Archived,
// after the messages of that thread queued before it. Discord says not
// who archived it (a person, or its auto-archive); the gateway acts only
// on threads it has a workspace or an agent for.
func (a *Adapter) onThreadUpdate(c *discordgo.Channel) {
	if c == nil || !c.IsThread() || c.ThreadMetadata == nil || !c.ThreadMetadata.Archived {
		return
	}
	r := a.current()
	if r == nil {
		return
	}
	parent := c.ParentID
	if parent == "" {
		parent = c.ID // never seen without one; keep the ref usable
	}
	in := channels.Inbound{Thread: channels.ThreadRef{Platform: Platform, Channel: parent, Thread: c.ID}, Archived: true, Space: c.GuildID}
	if !r.lanes.Do(c.ID, func() {
		if r.ctx.Err() == nil {
			r.h(r.ctx, in)
		}
	}) {
		a.log.Warn("discord: inbound backlog full; thread archive dropped", "thread", c.ID)
	}
}
