package projector

// Settings is the acp.stream configuration section. The zero value is not
// useful; start from DefaultSettings.
type Settings struct {
	// MetaMode is how much tool and status activity is shown: "off" (none),
	// "minimal" (one start and one terminal line per tool call, identical
	// repeats dropped) or "verbose" (every change but exact repeats).
	MetaMode string `koanf:"metaMode" validate:"oneof=off minimal verbose"`
	// ShowUsage shows usage lines, only when (used, size) changed.
	ShowUsage bool `koanf:"showUsage"`
	// DeliveryMode is "live" (text flows as it arrives) or "final_only"
	// (everything is held and delivered at turn end, in the same order).
	DeliveryMode string `koanf:"deliveryMode" validate:"oneof=live final_only"`
	// MaxTurnChars caps the visible reply text of a turn, in code points;
	// beyond it one truncation notice is shown.
	MaxTurnChars int `koanf:"maxTurnChars" validate:"min=1,max=10000000"`
	// MaxToolSummaryChars cuts a tool line, in code points.
	MaxToolSummaryChars int `koanf:"maxToolSummaryChars" validate:"min=16,max=4000"`
	// MaxStatusChars cuts a status line, in code points.
	MaxStatusChars int `koanf:"maxStatusChars" validate:"min=16,max=4000"`
	// MaxMetaEventsPerTurn caps the tool, status and plan messages posted
	// per turn (see the package comment, "The meta cap").
	MaxMetaEventsPerTurn int `koanf:"maxMetaEventsPerTurn" validate:"min=0,max=100000"`
	// TagVisibility turns sessionUpdate tags on or off by their wire name.
	// Tags not listed keep their default (see DefaultTagVisibility).
	TagVisibility map[string]bool `koanf:"tagVisibility"`
	// LiveText is how live text is delivered where the channel can edit:
	// "draft" (one message edited in place) or "blocks" (paragraph and
	// sentence blocks as new messages).
	LiveText string `koanf:"liveText" validate:"oneof=draft blocks"`
	// Footer is the line at the end of each turn: "off" (none) or
	// "compact" (elapsed time, tool calls, tokens, context and cost,
	// only the parts known: see Projector.EndTurnAfter).
	Footer string `koanf:"footer" validate:"oneof=off compact"`
}

// Meta modes.
const (
	MetaOff     = "off"
	MetaMinimal = "minimal"
	MetaVerbose = "verbose"
)

// Delivery modes.
const (
	DeliveryLive      = "live"
	DeliveryFinalOnly = "final_only"
)

// Live text styles.
const (
	LiveDraft  = "draft"
	LiveBlocks = "blocks"
)

// Footers.
const (
	FooterOff     = "off"
	FooterCompact = "compact"
)

// DefaultTagVisibility returns the default visibility of every known tag.
func DefaultTagVisibility() map[string]bool {
	return map[string]bool{
		"agent_message_chunk":       true,
		"tool_call":                 true,
		"tool_call_update":          true,
		"usage_update":              false,
		"available_commands_update": false,
		"current_mode_update":       false,
		"config_option_update":      false,
		"session_info_update":       false,
		"plan":                      false,
		"agent_thought_chunk":       false,
		"user_message_chunk":        false,
		"subagent_update":           true, // a subagent's card (subagent.go)
		// ACP 1.33. plan_update and plan_removed are not listed: they
		// follow plan unless set.
		"notice":                   true,
		"compaction_update":        true,
		"compaction_summary_chunk": true,
	}
}

// DefaultSettings returns the documented defaults.
func DefaultSettings() Settings {
	return Settings{
		MetaMode:             MetaMinimal,
		DeliveryMode:         DeliveryLive,
		MaxTurnChars:         24000,
		MaxToolSummaryChars:  320,
		MaxStatusChars:       320,
		MaxMetaEventsPerTurn: 64,
		LiveText:             LiveDraft,
		Footer:               FooterOff,
	}
}
