package discord

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Sharding. A bot in many guilds splits its gateway into shards: Discord
// sends a guild's events only to the connection that identified as shard
// (guild_id >> 22) % count, and DMs to shard 0. Each gateway edge of a
// cluster runs one adapter with its own Options.Shard (every edge the same
// count), so every event reaches exactly one edge
// (TestShardsSplitGuilds).
//
// Identify concurrency. Discord lets a bot start
// session_start_limit.max_concurrency sessions at once (GET
// /gateway/bot): shards whose id % max_concurrency are equal share one
// IDENTIFY per 5 s. discordgo v0.29.0 sends the shard in its IDENTIFY
// (Session.ShardID, ShardCount) and does nothing about the limit, so a
// sharded adapter (count > 1) waits for its bucket's turn before each
// websocket dial that will identify, i.e. every dial but one to the
// session's resume URL (identifyTurn); the next turn is 5 s after the
// dial, or after the READY that answers the IDENTIFY when later. The turns are kept per process
// (identifyTurns), so shards started by one process never collide. Shards
// in separate processes (the edges of a cluster) take their turns through
// Options.IdentifyGate instead, shared by the processes (the cluster's
// `<cluster>_identify` bucket), which every identify then waits for,
// sharded or not (a restarted edge waits for its own last identify's
// bucket too). An IDENTIFY
// refused for the limit closes the connection, and Run retries with its
// backoff. An INVALID_SESSION makes discordgo identify on that
// connection at once: the adapter holds the op 9 back until it waited 1
// to 5 s and took the identify's turn too (invalid.go,
// TestInvalidSessionWaitsAndTakesTheTurn).

// identifyInterval is how long a bucket waits between two identifies.
const identifyInterval = 5 * time.Second

// IdentifyInterval is how long an identify bucket waits between two
// identifies: the turn an IdentifyGate gives.
const IdentifyInterval = identifyInterval

// identifyTurns spaces the identifies of the shards of this process.
var identifyTurns = &turns{next: map[string]time.Time{}}

// turns hands out one turn per key per identifyInterval.
type turns struct {
	mu   sync.Mutex           // guards next
	next map[string]time.Time // the earliest time of the key's next turn
}

// wait waits for key's turn; it returns ctx's error when ctx ends first.
// A turn taken moves the key's next turn identifyInterval on.
func (t *turns) wait(ctx context.Context, key string) error {
	for {
		t.mu.Lock()
		now := time.Now()
		at := t.next[key]
		if !at.After(now) {
			t.next[key] = now.Add(identifyInterval)
			t.mu.Unlock()
			return nil
		}
		t.mu.Unlock()
		timer := time.NewTimer(at.Sub(now))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// ready moves key's next turn to identifyInterval after now: a READY
// came, so Discord has the IDENTIFY, later than the turn's dial.
func (t *turns) ready(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if next := time.Now().Add(identifyInterval); next.After(t.next[key]) {
		t.next[key] = next
	}
}

// IdentifyGate takes turns of identify buckets shared by several
// processes: a bucket taken cannot be taken again, by any of them, for 5 s
// (identifyInterval) after it was taken or renewed. cluster.Turns is one.
type IdentifyGate interface {
	// Take waits until the bucket key may identify, and takes its turn.
	Take(ctx context.Context, key string) error
	// Renew makes the bucket's turn last 5 s from now: a READY came.
	Renew(ctx context.Context, key string) error
}

// identifyTurn waits, for an adapter about to dial a connection that will
// identify, until its bucket may identify (takeIdentifyTurn).
func (a *Adapter) identifyTurn(ctx context.Context) error {
	if a.resume.known() {
		return nil // it resumes; an identify after a refusal waits in invalidSessionTurn
	}
	return a.takeIdentifyTurn(ctx)
}

// takeIdentifyTurn waits until the adapter's bucket may identify: through
// the gate when there is one, else, when sharded, in the process's turns.
func (a *Adapter) takeIdentifyTurn(ctx context.Context) error {
	if a.o.IdentifyGate == nil && a.o.Shard.Count <= 1 {
		return nil
	}
	conc := a.maxConcurrency(ctx)
	if a.o.IdentifyGate != nil {
		if err := a.o.IdentifyGate.Take(ctx, gateKey(a.o.Shard.ID, conc)); err != nil {
			return fmt.Errorf("discord: waiting for the turn to identify: %w", err)
		}
		return nil
	}
	return identifyTurns.wait(ctx, a.identifyKey())
}

// gateKey is the IdentifyGate key of shard's bucket: Discord's rate-limit
// key, shard % max_concurrency.
func gateKey(shard, conc int) string { return fmt.Sprint(shard % max(conc, 1)) }

// identifyKey is the adapter's identify bucket, among every bot's.
func (a *Adapter) identifyKey() string {
	a.mu.Lock()
	conc := max(a.concurrency, 1)
	a.mu.Unlock()
	return fmt.Sprintf("%s %s %d", a.o.APIBaseURL, a.s.Token, a.o.Shard.ID%conc)
}

// identified is called on READY: the bucket's next turn counts from now.
// The gate is renewed on the run's lanes (onEvent never blocks).
func (a *Adapter) identified() {
	if g := a.o.IdentifyGate; g != nil {
		r := a.current()
		if r == nil {
			return
		}
		a.mu.Lock()
		key := gateKey(a.o.Shard.ID, a.concurrency)
		a.mu.Unlock()
		r.lanes.Do("identify", func() {
			if err := g.Renew(r.ctx, key); err != nil && r.ctx.Err() == nil {
				a.log.Warn("discord: cannot renew the identify turn", "err", err)
			}
		})
		return
	}
	if a.o.Shard.Count > 1 {
		identifyTurns.ready(a.identifyKey())
	}
}

// maxConcurrency returns the bot's identify concurrency from GET
// /gateway/bot, remembered once known; 1 (the strictest) when it cannot
// be read.
func (a *Adapter) maxConcurrency(ctx context.Context) int {
	a.mu.Lock()
	n := a.concurrency
	a.mu.Unlock()
	if n > 0 {
		return n
	}
	g, err := a.s.GatewayBot(discordgo.WithContext(ctx))
	if err != nil || g.SessionStartLimit.MaxConcurrency < 1 {
		a.log.Warn("discord: cannot read the identify concurrency; identifying one shard per 5 s", "err", err)
		return 1
	}
	a.mu.Lock()
	a.concurrency = g.SessionStartLimit.MaxConcurrency
	a.mu.Unlock()
	return g.SessionStartLimit.MaxConcurrency
}

// known reports whether a resume URL is known: the next dial resumes there
// rather than identifying.
func (r *resumeURL) known() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url != nil
}
