package discord

import (
	"fmt"
	"net/url"

	"github.com/acpgw/gateway/channels"
)

// Config is the Discord bot's configuration section (channels.discord).
// The bot runs when Token is set.
type Config struct {
	// Token is the bot token (a secret; normally "${DISCORD_TOKEN}").
	Token string `koanf:"token" secret:"true"`
	// APIBaseURL is where the Discord API is (default
	// https://discord.com; tests point it at a fake server).
	APIBaseURL string `koanf:"apiBaseURL"`
	// DMs lets people talk to the bot in direct messages.
	DMs bool `koanf:"dms"`
	// ToolStyle is how a turn's tool calls show: "lines", one message
	// per tool call edited in place, or "card", the rows of one progress
	// card per run of tool calls (a Components V2 message).
	ToolStyle string `koanf:"toolStyle" validate:"omitempty,oneof=lines card"`
	// Shard is the shard of the bot this process connects (gateway
	// edge: several edges split a big bot's guilds). Discord sends a
	// guild's events only to shard (guild_id >> 22) % count. Default: one
	// shard, {id: 0, count: 1}.
	Shard Shard `koanf:"shard"`
}

// Shard is a gateway shard: ID of Count (0 ≤ ID < Count).
type Shard struct {
	// ID is this connection's shard, from 0.
	ID int `koanf:"id" validate:"gte=0"`
	// Count is the number of shards of the bot, every edge the same.
	Count int `koanf:"count" validate:"gte=1"`
}

// DefaultConfig returns the section's defaults.
func DefaultConfig() Config {
	return Config{APIBaseURL: DefaultAPIBaseURL, ToolStyle: ToolLines, Shard: Shard{ID: 0, Count: 1}}
}

// Info says what the configuration calls Discord's places: guilds, roles
// and channels (a thread's parent channel).
func (c Config) Info() channels.SectionInfo {
	return channels.SectionInfo{
		Space: "guild", Spaces: "guilds", Groups: "roles", ChannelOverrides: true,
		Enable:    "channels.discord.token",
		SecretEnv: []string{"DISCORD_TOKEN"},
	}
}

// On reports whether the bot runs: when its token is set.
func (c Config) On(bool) bool { return c.Token != "" }

// Validate checks the section at path (channels.discord).
func (c Config) Validate(path string, _ bool) []error {
	var errs []error
	if err := checkURL(path+".apiBaseURL", c.APIBaseURL); err != nil {
		errs = append(errs, err)
	}
	if err := c.Shard.check(path + ".shard"); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// check reports a shard id not below count (the validate tags report a
// negative id and a count below 1).
func (s Shard) check(key string) error {
	if s.Count >= 1 && s.ID >= s.Count {
		return &channels.ConfigError{Key: key + ".id", Msg: fmt.Sprintf("want 0 to %d (shard.count - 1), got %d", s.Count-1, s.ID)}
	}
	return nil
}

func checkURL(key, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &channels.ConfigError{Key: key, Msg: fmt.Sprintf("want an http or https URL, got %q", s)}
	}
	return nil
}

// Limits returns Discord's limits, which every Adapter reports.
//
// There is no limit of lines (MaxLines): Discord's clients (desktop, web,
// iOS, Android) show a message's content whole, however many lines it
// has, and collapse none of it, so a line limit would only cut an answer
// into more messages than its 2,000 characters need (a 125-line answer of
// 4,495 characters took 5 messages at 30 lines a message, not 3) and cut
// code blocks that fit one message.
func Limits() channels.Limits {
	return channels.Limits{
		MaxMessageChars: maxMessageChars,
		MinEditInterval: minEditInterval,
		TypingInterval:  typingInterval,
		// A bot's typing indicator disappears when it posts.
		TypingClearedByPost: true,
		// A prompt's whole text goes with it as a file (Prompt), in the
		// same request: it cannot get lost or out of order.
		MaxAttachmentBytes: maxAttachmentBytes,
		MaxUploadBytes:     maxUploadBytes,
	}
}
