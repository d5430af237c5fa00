package discord

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// shardState is the fake's sharding: with count set, every IDENTIFY must
// name a shard of count, and a guild's dispatches go only to the
// connection of shard (guild_id >> 22) % count (DMs to shard 0), as
// Discord does. All shards share one log (so one sequence); each
// connection skips what is not for it.
type shardState struct {
	count          int        // the bot's shard count; 0: not sharded
	maxConcurrency int        // session_start_limit.max_concurrency (0: 1)
	guilds         []string   // guilds besides fakeDiscord.guild
	to             []logRoute // where each entry of the log goes, by index
	only           *fakeConn  // while set, new entries go to this connection alone
	// identified is when each identify bucket (shard % maxConcurrency)
	// last identified.
	identified map[int]time.Time
	// refused counts IDENTIFYs closed for a bad shard.
	refused int
}

// logRoute is where a log entry goes: to conn, or when nil to shard's
// connection.
type logRoute struct {
	conn  *fakeConn
	shard int
}

// shard makes the fake a sharded bot of count shards whose identify
// concurrency is maxConcurrency.
func (f *fakeDiscord) shard(count, maxConcurrency int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shards.count = count
	f.shards.maxConcurrency = maxConcurrency
	f.shards.identified = map[int]time.Time{}
}

// addGuild adds a guild on shard (of the count set by shard) with a text
// channel and a thread the bot opened in it; it returns the guild and the
// thread.
func (f *fakeDiscord) addGuild(shard int) (guild, thread string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int64(f.shards.count)
	k := 1000*n + int64(shard) + n*int64(len(f.shards.guilds)) // k % count == shard
	guild = strconv.FormatInt(k<<22|1, 10)
	f.shards.guilds = append(f.shards.guilds, guild)
	channel, thread := f.newIDLocked(), f.newIDLocked()
	f.chans[channel] = &fakeChannel{ID: channel, Type: 0, Guild: guild, Name: "general"}
	f.chans[thread] = &fakeChannel{ID: thread, Type: 11, Guild: guild, Parent: channel, Owner: f.bot.ID, Name: "a session"}
	return guild, thread
}

// shardOfLocked is the shard Discord sends guild's events to.
func (f *fakeDiscord) shardOfLocked(guild string) int {
	id, err := strconv.ParseUint(guild, 10, 64)
	if err != nil || f.shards.count == 0 {
		return 0
	}
	return int((id >> 22) % uint64(f.shards.count))
}

// identifyShardLocked checks the shard of an IDENTIFY on c and its turn
// in its identify bucket; it returns why Discord would close the
// connection, or "" and records c's shard.
func (f *fakeDiscord) identifyShardLocked(c *fakeConn, shard *[2]int) string {
	if shard == nil || shard[1] != f.shards.count || shard[0] < 0 || shard[0] >= shard[1] {
		f.shards.refused++
		return "Invalid shard."
	}
	bucket := shard[0] % max(f.shards.maxConcurrency, 1)
	now := time.Now()
	if last, ok := f.shards.identified[bucket]; ok && now.Sub(last) < 5*time.Second {
		f.violations = append(f.violations, fmt.Sprintf("shard %d identified %v after another of bucket %d (want 5 s apart)", shard[0], now.Sub(last), bucket))
	}
	f.shards.identified[bucket] = now
	c.shard = shard[0]
	return ""
}

// routeLocked records where the entry just appended to the log goes, and
// wakes the connection that sends it.
func (f *fakeDiscord) routeLocked(d any) {
	r := logRoute{conn: f.shards.only}
	if r.conn == nil {
		var g struct {
			GuildID string `json:"guild_id"`
		}
		json.Unmarshal(mustJSON(d), &g)
		r.shard = f.shardOfLocked(g.GuildID) // DMs ("") go to shard 0
	}
	for len(f.shards.to) < len(f.log)-1 {
		f.shards.to = append(f.shards.to, logRoute{}) // entries before sharding
	}
	f.shards.to = append(f.shards.to, r)
	for c := range f.conns {
		if c.live && (c == r.conn || r.conn == nil && c.shard == r.shard) {
			c.poke()
		}
	}
}

// forConnLocked reports whether the log entry at i goes to c.
func (f *fakeDiscord) forConnLocked(c *fakeConn, i int) bool {
	if f.shards.count == 0 || i >= len(f.shards.to) {
		return true
	}
	r := f.shards.to[i]
	if r.conn != nil {
		return r.conn == c
	}
	return r.shard == c.shard
}

// serveGatewayBot answers GET /gateway/bot: the URL, the shard count
// Discord recommends, and the session start limit.
func (f *fakeDiscord) serveGatewayBot(w http.ResponseWriter) {
	f.mu.Lock()
	shards, conc := max(f.shards.count, 1), max(f.shards.maxConcurrency, 1)
	f.mu.Unlock()
	writeJSON(w, 200, map[string]any{
		"url":    "ws://" + f.addr + "/gateway",
		"shards": shards,
		"session_start_limit": map[string]any{
			"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": conc,
		},
	})
}
