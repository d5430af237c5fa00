package discord

// deleteChannel deletes a thread (THREAD_DELETE) or a channel
// (CHANNEL_DELETE) as a person with Manage Threads or Manage Channels
// does; Discord says not who.
func (f *fakeDiscord) deleteChannel(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.chans[id]
	delete(f.chans, id)
	d := channelJSON(c)
	if c.Type == 11 {
		f.dispatchLocked("THREAD_DELETE", map[string]any{"id": c.ID, "guild_id": d["guild_id"], "parent_id": c.Parent, "type": c.Type})
		return
	}
	f.dispatchLocked("CHANNEL_DELETE", d)
}
