package discord

import (
	"sync"

	"github.com/bwmarrin/discordgo"
)

// place is what the adapter needs to know about a Discord channel.
type place struct {
	guild  string // "" for a DM
	parent string // a thread's parent channel
	owner  string // a thread's creator
	typ    discordgo.ChannelType
}

// thread reports whether the channel is a thread.
func (p place) thread() bool {
	switch p.typ {
	case discordgo.ChannelTypeGuildPublicThread, discordgo.ChannelTypeGuildPrivateThread, discordgo.ChannelTypeGuildNewsThread:
		return true
	}
	return false
}

// threadable reports whether a thread can be started from a message in the
// channel.
func (p place) threadable() bool {
	return p.typ == discordgo.ChannelTypeGuildText || p.typ == discordgo.ChannelTypeGuildNews
}

// places caches the channels the gateway told about (GUILD_CREATE, THREAD_*,
// CHANNEL_*) and those fetched on demand, and remembers the threads in
// which the bot was mentioned. It is safe for concurrent use.
type places struct {
	mu    sync.Mutex // guards the fields below
	known map[string]place
	bound map[string]bool   // thread ids where the bot was mentioned
	roles map[string]string // guild id → the bot's own role there
}

// maxBound bounds the set of mentioned threads; beyond it the set starts
// afresh (threads the bot opened are recognised by their owner anyway).
const maxBound = 10000

func newPlaces() *places {
	return &places{known: map[string]place{}, bound: map[string]bool{}, roles: map[string]string{}}
}

// put records channel c; guild fills in a missing guild id.
func (p *places) put(c *discordgo.Channel, guild string) {
	if c == nil || c.ID == "" {
		return
	}
	if c.GuildID != "" {
		guild = c.GuildID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.known[c.ID] = place{guild: guild, parent: c.ParentID, owner: c.OwnerID, typ: c.Type}
}

// forget drops channel id (deleted).
func (p *places) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.known, id)
	delete(p.bound, id)
}

// lookup returns what is known of channel id.
func (p *places) lookup(id string) (place, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl, ok := p.known[id]
	return pl, ok
}

// bind remembers that the bot was mentioned in thread id.
func (p *places) bind(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bound) >= maxBound {
		clear(p.bound)
	}
	p.bound[id] = true
}

// isBound reports whether the bot was mentioned in thread id.
func (p *places) isBound(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bound[id]
}

// setBotRole records role as the bot's own role in guild.
func (p *places) setBotRole(guild, role string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roles[guild] = role
}

// botRole returns the bot's own role in guild, or "" when not known.
func (p *places) botRole(guild string) string {
	if guild == "" {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.roles[guild]
}
