// Package discord is the gateway's Discord adapter: a bot that people
// mention in a channel, which then works with them in a thread.
//
// # Inbound
//
// A message that mentions the bot in a guild text channel opens a public
// thread from that message (named from the prompt) and is delivered as the
// thread's first message. Later messages in that thread need no mention:
// the adapter delivers every message in a thread the bot owns (it opened
// it), in which it was mentioned since Run started, or which
// Options.KnownThread says is bound. Direct messages are
// delivered when Options.DMs is set. The bot's own messages are never
// delivered; other bots' messages in threads are, with Author.Bot set, and
// the session ignores them unless configured otherwise. A bot's mention in
// a channel opens no thread.
//
// A thread's ThreadRef is {Platform: "discord", Channel: parent channel id,
// Thread: thread id}; a direct message's is {Channel: DM channel id,
// Thread: the same id}. Inbound.Space is the guild id ("" in DMs) and
// Author.Roles are the member's role ids.
//
// Reading what people write needs the Message Content intent, a privileged
// intent that must be switched on in the Developer Portal (Bot → Privileged
// Gateway Intents); without it Discord closes the connection with code 4014
// and Run returns an error saying so.
//
// # Outbound
//
// Every message and edit carries allowed_mentions {"parse": []}: agent text
// never pings @everyone, roles or users. Thoughts are shown as a block quote
// with a 💭; other kinds are posted as written. Every message that is not
// the agent's text (tool and status lines, notices, plans, thoughts,
// prompts, forms, answers to a message) carries the flag SUPPRESS_EMBEDS:
// no link previews, and the mark by which History reports it as
// channels.Inbound.Meta, so that a thread's quoted context leaves it out.
// Permission prompts carry one
// button per option (at most 25, five per row); a click is acknowledged at
// once (a deferred update, well within Discord's 3 s) and delivered as
// Inbound.Choice with a Reply that answers with an ephemeral follow-up.
// Editing a prompt removes its buttons.
//
// With Options.ToolStyle ToolCard the adapter is a channels.Carder whose
// cards are on: dispatch shows a run of tool calls as the rows of one
// progress card (Card), a Components V2 message (flag IS_COMPONENTS_V2) of
// one container with a text display per tool line. Such a message carries
// no content; text stays in classic messages.
//
// Edits that Discord refuses because the message is gone, in an archived
// thread (50083) or too old to edit often (30046) return an error wrapping
// channels.ErrMessageGone, so dispatch posts anew; a post into an archived
// thread unarchives it.
//
// # Rate limits
//
// REST calls carry the caller's context and never wait inside discordgo:
// retries on 429 are off, and the adapter reads Discord's X-RateLimit
// headers itself (hiding them from discordgo's limiter, which keys buckets
// by URL and would sleep). It learns from the responses which bucket
// (X-RateLimit-Bucket) each route belongs to — creating and editing
// messages share one — and counts the requests left in each bucket per
// channel, guild or webhook. A call that the bucket has no room for, or a
// 429, returns *channels.RateLimitError at once, before anything is sent;
// dispatch decides when to try again, so one busy thread never stalls
// another. The first call of a route whose bucket is not known yet waits
// while a bucket of its channel is exhausted, as it may be the same, and
// is the only one of its route in flight until its answer names the
// bucket. The global limit (50 requests a second, interactions apart) is
// counted by the adapter, as Discord tells it only with a 429.
//
// The one place the adapter waits itself is a mention in a channel
// opening its thread: a burst of mentions would otherwise be lost. The
// mentions of a channel wait in line, in the order Discord sent them, and
// each opens its thread as soon as the limits let it, for as long as
// Options.RetryFor (delivery.retryFor); see mentionline.go.
//
// # Connection
//
// Run opens the gateway connection and keeps it: when it drops, or Discord
// asks for a reconnect, the adapter resumes the session (RESUME), so events
// sent meanwhile are replayed. It resumes at the resume_gateway_url that
// READY named, as Discord requires (discordgo v0.29.0 would resume at the
// URL it first dialled; see resumeURL); when that URL cannot be reached,
// the next attempt goes to the gateway's URL. Options.APIBaseURL points REST and the
// gateway discovery (GET /api/v9/gateway) at another server, such as a
// proxy or a test fake; the websocket then goes to the URL that server
// advertises.
//
// Options.Shard makes the adapter one shard of a sharded bot (several
// gateway edges): Discord sends it only the events of guilds whose
// (guild_id >> 22) % count is its id, and shards identify in turn as
// Discord's identify concurrency allows (see shard.go).
//
// Run logs the invite URL once connected. It asks for the permissions in
// [Permissions]: View Channels, Send Messages, Send Messages in Threads,
// Create Public Threads and Read Message History.
package discord
