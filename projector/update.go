package projector

// ToolCallID is an agent's id of one tool call.
type ToolCallID string

// Tag is a known ACP sessionUpdate tag. Updates whose tag the projector does
// not know carry TagUnknown and keep the raw string in Update.RawTag.
type Tag uint8

// The sessionUpdate tags the projector knows.
const (
	TagUnknown Tag = iota
	TagAgentMessageChunk
	TagAgentThoughtChunk
	TagUserMessageChunk
	TagToolCall
	TagToolCallUpdate
	TagPlan
	TagAvailableCommands
	TagCurrentMode
	TagUsage
	TagConfigOption
	TagSessionInfo

	// Subagents (ACP 1.33).
	TagSubagent
	TagSessionMessage
	TagSessionMessageChunk

	// ACP 1.33: notices, compaction, plan operations.
	TagNotice
	TagCompaction
	TagCompactionChunk
	TagPlanUpdate
	TagPlanRemoved
	numTags
)

var tagNames = [numTags]string{
	TagUnknown:           "",
	TagAgentMessageChunk: "agent_message_chunk",
	TagAgentThoughtChunk: "agent_thought_chunk",
	TagUserMessageChunk:  "user_message_chunk",
	TagToolCall:          "tool_call",
	TagToolCallUpdate:    "tool_call_update",
	TagPlan:              "plan",
	TagAvailableCommands: "available_commands_update",
	TagCurrentMode:       "current_mode_update",
	TagUsage:             "usage_update",
	TagConfigOption:      "config_option_update",
	TagSessionInfo:       "session_info_update",

	TagSubagent:            "subagent_update",
	TagSessionMessage:      "session_message",
	TagSessionMessageChunk: "session_message_chunk",
	// ACP 1.33: notices, compaction, plan operations.
	TagNotice:          "notice",
	TagCompaction:      "compaction_update",
	TagCompactionChunk: "compaction_summary_chunk",
	TagPlanUpdate:      "plan_update",
	TagPlanRemoved:     "plan_removed",
}

// String returns the wire name of a known tag, "" for TagUnknown.
func (t Tag) String() string {
	if t < numTags {
		return tagNames[t]
	}
	return ""
}

// ParseTag maps a wire sessionUpdate string to its Tag (TagUnknown if the
// projector does not know it). It does not allocate.
func ParseTag(s string) Tag {
	switch s {
	case "agent_message_chunk":
		return TagAgentMessageChunk
	case "agent_thought_chunk":
		return TagAgentThoughtChunk
	case "user_message_chunk":
		return TagUserMessageChunk
	case "tool_call":
		return TagToolCall
	case "tool_call_update":
		return TagToolCallUpdate
	case "plan":
		return TagPlan
	case "available_commands_update":
		return TagAvailableCommands
	case "current_mode_update":
		return TagCurrentMode
	case "usage_update":
		return TagUsage
	case "config_option_update":
		return TagConfigOption
	case "session_info_update":
		return TagSessionInfo

	case "subagent_update":
		return TagSubagent
	case "session_message":
		return TagSessionMessage
	case "session_message_chunk":
		return TagSessionMessageChunk
	// ACP 1.33: notices, compaction, plan operations.
	case "notice":
		return TagNotice
	case "compaction_update":
		return TagCompaction
	case "compaction_summary_chunk":
		return TagCompactionChunk
	case "plan_update":
		return TagPlanUpdate
	case "plan_removed":
		return TagPlanRemoved
	}
	return TagUnknown
}

// KnownTags lists the wire names of every known tag, in Tag order.
func KnownTags() []string { return append([]string(nil), tagNames[1:]...) }

// Update is one decoded ACP session/update. Fields are filled according to
// Tag; the decoder routes by the raw sessionUpdate string, never by shape.
// An Update is a value the projector only reads; the decoder may reuse it.
type Update struct {
	Tag Tag
	// RawTag is the sessionUpdate string as sent.
	RawTag string
	// SessionID is params.sessionId.
	SessionID string

	// Chunk fields (agent_message_chunk, agent_thought_chunk,
	// user_message_chunk, and unknown tags with a text content block).
	Text        string
	ContentType string // "text", "image", "resource_link", ...
	// Image is the chunk's picture: an image block's, or a resource
	// link's whose media type or name is an image's.
	Image     ImageBlock
	MessageID string
	// Thought is set when metadata marks a message chunk as a thought,
	// segment or intent (update segment/kind/channel/role, content
	// annotations or _meta). Never inferred from text.
	Thought bool

	// Tool holds tool_call and tool_call_update fields.
	Tool ToolUpdate

	// Plan holds the entries of a plan update (the whole plan each time).
	Plan []PlanEntry

	// Usage holds usage_update fields.
	Usage UsageUpdate

	// ModeID is current_mode_update's currentModeId.
	ModeID string

	// Title is session_info_update's title; TitleSet reports that the
	// field was present (a null title clears it: TitleSet with Title "").
	Title    string
	TitleSet bool

	// Commands is available_commands_update's list of command names.
	Commands []Command

	// Config is config_option_update's options (id and current value).
	Config []ConfigOption

	// Summary is a short human text found in an unknown update (its
	// title, description or text), used to render it in verbose mode.
	Summary string

	// Subagents (ACP 1.33).

	// Subagent is subagent_update's fields: the child session it
	// announces or patches.
	Subagent SubagentUpdate
	// Sender and Recipient are the senderSessionId and
	// recipientSessionId of a session_message(_chunk), whose text is in
	// Text (a text content block) and id in MessageID.
	Sender, Recipient string
	// Child is not decoded: package agent (and `gateway replay`) sets it
	// to the child's session id on an update that came on a subagent's
	// session the session announced (SessionID is then the child's id
	// too); "" for the session's own updates.
	Child string

	// ACP 1.33 (notice, compaction_update, compaction_summary_chunk,
	// plan_update, plan_removed).

	// Notice is a notice update's fields.
	Notice NoticeUpdate
	// Compaction is a compaction_update's or compaction_summary_chunk's
	// fields.
	Compaction CompactionUpdate
	// PlanID is plan_update's and plan_removed's planId; a plan_update's
	// plan is PlanDoc, its entries (type items) in Plan.
	PlanID  string
	PlanDoc PlanDoc
}

// SubagentUpdate is a subagent_update: a patch of one child session (an
// omitted field leaves what was known, null clears it).
type SubagentUpdate struct {
	// ID is update.sessionId, the child's session id.
	ID string
	// Title and Description, when their Set flag says the field came
	// (null: Set with "").
	Title, Description       string
	TitleSet, DescriptionSet bool
	// State is state.state ("running", "idle", "requires_action",
	// "unknown", or a value this gateway does not know); StateSet says
	// the state came (null: StateSet with "").
	State    string
	StateSet bool
	// Cancel says the child can be cancelled (capabilities.cancel);
	// CapsSet says capabilities came (null or an object).
	Cancel, CapsSet bool
}

// NoticeUpdate is an agent's notice: a live event, not history.
type NoticeUpdate struct {
	// Severity is "info", "warning" or "error" as sent; another value
	// reads as info.
	Severity    string
	Title       string
	Description string
}

// CompactionUpdate is a sparse compaction state: Summary and Error follow
// patch semantics (their Set flag false: unchanged; set with nothing:
// cleared; set with a value: replaced).
type CompactionUpdate struct {
	ID string
	// Status is "in_progress", "completed", "failed", "cancelled" as sent
	// ("" when absent).
	Status string
	// Summary is the text of the summary's blocks (compaction_update).
	Summary    []string
	SummarySet bool
	Error      string
	ErrorSet   bool
	// Chunk is the text of a compaction_summary_chunk's block.
	Chunk string
}

// PlanDoc is a plan_update's plan: Type "items" (entries in Update.Plan),
// "file" (URI) or "markdown" (Markdown).
type PlanDoc struct {
	Type     string
	URI      string
	Markdown string
}

// ToolStatus is an ACP tool call status.
type ToolStatus uint8

// Tool call statuses, in their forward order.
const (
	StatusNone ToolStatus = iota
	StatusPending
	StatusInProgress
	StatusCompleted
	StatusFailed
	// StatusCancelled is never sent by agents: the projector sets it on
	// tools still open when a turn ends cancelled or in error.
	StatusCancelled
)

// Terminal reports whether s is a final status.
func (s ToolStatus) Terminal() bool { return s >= StatusCompleted }

// String returns the wire name ("pending", "in_progress", ...).
func (s ToolStatus) String() string {
	switch s {
	case StatusPending:
		return "pending"
	case StatusInProgress:
		return "in_progress"
	case StatusCompleted:
		return "completed"
	case StatusFailed:
		return "failed"
	case StatusCancelled:
		return "cancelled"
	}
	return ""
}

// ParseToolStatus maps a wire status; unknown strings give StatusNone.
func ParseToolStatus(s string) ToolStatus {
	switch s {
	case "pending":
		return StatusPending
	case "in_progress":
		return StatusInProgress
	case "completed":
		return StatusCompleted
	case "failed":
		return StatusFailed
	}
	return StatusNone
}

// ToolUpdate is a sparse tool call state: a Has* flag or a non-nil slice
// says that the field was present in the frame.
type ToolUpdate struct {
	ID       ToolCallID
	Title    string
	HasTitle bool
	// Kind is the ACP tool kind (read, edit, execute, ...), "" if absent.
	Kind   string
	Status ToolStatus
	// RawInput and RawOutput are the raw JSON values, nil if absent.
	RawInput  []byte
	RawOutput []byte
	// Content is the tool's content blocks, decoded for display.
	Content    []ToolContent
	HasContent bool
	Locations  []Location
}

// ToolContent is one tool content block.
type ToolContent struct {
	// Type is "content", "diff" or "terminal".
	Type string
	// Text is the text of a "content" block.
	Text string
	// Path, OldText and NewText describe a "diff" block.
	Path    string
	OldText string
	NewText string
	// TerminalID names a "terminal" block.
	TerminalID string
	// Image is the picture of a "content" block holding an image (or a
	// resource link to one).
	Image ImageBlock
}

// ImageBlock is a picture the agent shows: an ACP image content block
// (base64 data with its media type, maybe a uri) or a resource_link to an
// image (a uri, with its name and media type). The zero value is none.
type ImageBlock struct {
	// MimeType is the type the agent gives ("image/png").
	MimeType string
	// Data is the image's bytes in base64, as sent; "" for a link.
	Data string
	// URI is the image's address: a link's uri, or an image block's
	// optional one.
	URI string
	// Name is a resource link's name.
	Name string
}

// Known reports whether b is a picture: it has data, or a uri.
func (b ImageBlock) Known() bool { return b.Data != "" || b.URI != "" }

// Location is a file a tool touches.
type Location struct {
	Path string
	Line int // 0 when absent
}

// PlanEntry is one line of an agent's plan.
type PlanEntry struct {
	Content  string
	Priority string // high, medium, low
	Status   string // pending, in_progress, completed
}

// UsageUpdate is a usage_update. Used and Size are only meaningful when
// their Known flag is set: real agents send "used": null.
type UsageUpdate struct {
	Used, Size           int64
	UsedKnown, SizeKnown bool
	// Cost is the reported cost, if any.
	Cost      float64
	Currency  string
	CostKnown bool
}

// Command is an available slash command.
type Command struct {
	Name        string
	Description string
}

// ConfigOption is a session configuration option's current value.
type ConfigOption struct {
	ID    string
	Name  string
	Value string
}
