package slack

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// Config is the Slack app's configuration section (channels.slack). The
// app runs when both tokens are set.
type Config struct {
	// AppToken is the app-level token for Socket Mode (a secret starting
	// with "xapp-").
	AppToken string `koanf:"appToken" secret:"true"`
	// BotToken is the bot token for the Web API (a secret starting with
	// "xoxb-").
	BotToken string `koanf:"botToken" secret:"true"`
	// APIURL is the Web API base URL (default https://slack.com/api/). A
	// missing trailing "/" is added.
	APIURL string `koanf:"apiURL"`
	// Streaming is how the agent's text and tool calls show in threads:
	// "native" streams them as one message (chat.startStream, Markdown
	// text, tool calls as task cards, the plan) where the workspace
	// accepts it, else edits; "edits" posts messages and edits them.
	Streaming Streaming `koanf:"streaming" validate:"oneof=native edits"`
	// CommandPrefix starts a gateway command typed in a thread ("!model
	// x"): Slack clients take a message that starts with "/" as one of
	// Slack's slash commands and send no app slash command from a thread.
	// One to three characters, no space, not "/". A command also works
	// after a mention of the app ("@bot model x").
	CommandPrefix string `koanf:"commandPrefix"`
}

// Token prefixes: the kind of each token.
const (
	appTokenPrefix = "xapp-"
	botTokenPrefix = "xoxb-"
)

// DefaultConfig returns the section's defaults.
func DefaultConfig() Config {
	return Config{APIURL: DefaultAPIURL, Streaming: StreamingNative, CommandPrefix: DefaultCommandPrefix}
}

// Info says what the configuration calls Slack's places: workspaces (team
// ids), user groups and channels.
func (c Config) Info() channels.SectionInfo {
	return channels.SectionInfo{
		Space: "workspace", Spaces: "workspaces", Groups: "userGroups", ChannelOverrides: true,
		Enable:         "the channels.slack tokens",
		SecretEnv:      []string{"SLACK_*_TOKEN"},
		SecretPrefixes: []string{appTokenPrefix, botTokenPrefix},
	}
}

// On reports whether the app runs: when both its tokens are set.
func (c Config) On(bool) bool { return c.AppToken != "" && c.BotToken != "" }

// Normalize adds the missing trailing "/" to APIURL.
func (c *Config) Normalize() {
	if c.APIURL != "" && !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
}

// Validate checks the section at path (channels.slack). No message quotes
// a token.
func (c Config) Validate(path string, _ bool) []error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, &channels.ConfigError{Key: path + "." + key, Msg: fmt.Sprintf(format, args...)})
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("apiURL", "want an http or https URL, got %q", c.APIURL)
	}
	if err := checkCommandPrefix(c.CommandPrefix); err != nil {
		add("commandPrefix", "%v", err)
	}
	switch {
	case c.AppToken != "" && c.BotToken == "":
		add("botToken", "is required when appToken is set")
	case c.AppToken == "" && c.BotToken != "":
		add("appToken", "is required when botToken is set")
	}
	// A token still holding "${" had a reference that could not be
	// expanded, reported already.
	if c.AppToken != "" && !strings.HasPrefix(c.AppToken, appTokenPrefix) && !strings.Contains(c.AppToken, "${") {
		add("appToken", "must be an app-level token (starting with %q)", appTokenPrefix)
	}
	if c.BotToken != "" && !strings.HasPrefix(c.BotToken, botTokenPrefix) && !strings.Contains(c.BotToken, "${") {
		add("botToken", "must be a bot token (starting with %q)", botTokenPrefix)
	}
	return errs
}

// Limits returns Slack's limits, which every Adapter reports.
func Limits() channels.Limits {
	return channels.Limits{
		MaxMessageChars: maxMessageChars,
		MinEditInterval: minEditInterval,
		MinPostInterval: minPostInterval,
		// Slack's posting limit is the channel's, whose threads share
		// it (the adapter paces them in turn: pace).
		PostsPacedByChannel: true,
		TypingInterval:      typingInterval,
		MaxUploadBytes:      maxUploadBytes,
	}
}

// DefaultCommandPrefix is the default of Config.CommandPrefix.
const DefaultCommandPrefix = "!"

// checkCommandPrefix says what is wrong with a command prefix, nil when
// it may be used.
func checkCommandPrefix(p string) error {
	n := utf8.RuneCountInString(p)
	switch {
	case n < 1 || n > 3:
		return fmt.Errorf("want one to three characters such as %q, got %q", DefaultCommandPrefix, p)
	case strings.IndexFunc(p, unicode.IsSpace) >= 0:
		return fmt.Errorf("must not contain a space, got %q", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("must not start with \"/\" (Slack takes such messages as its own slash commands), got %q", p)
	case strings.HasPrefix(p, "<") || strings.HasPrefix(p, "&"):
		return fmt.Errorf("must not start with \"<\" or \"&\" (Slack's markup), got %q", p)
	}
	return nil
}
