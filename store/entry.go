package store

import (
	"encoding/json"
	"time"

	"github.com/acpgw/gateway/projector"
)

// EntryType names the kind of a transcript entry; it is stored as is.
type EntryType string

// The transcript entry types.
const (
	TypeMeta       EntryType = "meta"
	TypeMessage    EntryType = "message"
	TypeThought    EntryType = "thought"
	TypeToolCall   EntryType = "tool_call"
	TypePermission EntryType = "permission_request"
	TypePlan       EntryType = "plan"
	TypeModeChange EntryType = "mode_change"
)

// Entry is one item of a session's transcript.
type Entry struct {
	// Seq is the entry's position in the transcript, from 0.
	Seq int
	// Time is when the entry was created; Updated when it last changed.
	Time    time.Time
	Updated time.Time
	// Body is the entry's content: one of Message, Thought, ToolCall,
	// PermissionEntry, QuestionEntry, Plan, Meta or ModeChange (never a
	// pointer).
	// Bodies handed out by the store share slices with it; treat them as
	// read-only.
	Body Body
}

// Type returns the type of e's body ("" for a nil body).
func (e Entry) Type() EntryType {
	if e.Body == nil {
		return ""
	}
	return e.Body.entryType()
}

// Body is the content of an Entry. The set of bodies is closed: handle it
// with a type switch.
type Body interface {
	entryType() EntryType
}

// Role says who wrote a message.
type Role string

// The message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// MaxEntryText is the most text, in bytes, one message or thought entry
// keeps: the start of a longer text is stored, with its whole length.
const MaxEntryText = 256 << 10

// Message is text the user sent or the agent replied.
type Message struct {
	Role Role
	Text string
	// Length is the whole text's length in bytes when Text holds only
	// its first MaxEntryText bytes (cut at a character boundary); 0 when
	// Text is the whole text.
	Length int
}

// Thought is the agent's reasoning text.
type Thought struct {
	Text string
	// Length is as in Message.
	Length int
}

// ToolCall is the merged state of one tool call.
type ToolCall struct {
	ID     string
	Title  string
	Kind   string
	Status projector.ToolStatus
	// Input and Output are the raw JSON of rawInput and rawOutput, nil
	// when the agent sent none.
	Input  json.RawMessage
	Output json.RawMessage
	// Content is the tool's content blocks (text, diffs, terminals).
	Content   []projector.ToolContent
	Locations []projector.Location
}

// PermissionEntry is a permission request the gateway showed, and its
// answer.
type PermissionEntry struct {
	RequestID  string
	ToolCallID string
	Title      string
	Options    []PromptOption
	// Chosen is the option id picked; "" with a non-zero Answered means
	// the request was cancelled or expired.
	Chosen string
	// Asked is when the request was shown (the entry's Time); Answered
	// when it was answered, zero until then.
	Asked    time.Time
	Answered time.Time
}

// Plan is the agent's whole plan at one moment.
type Plan struct {
	Entries []projector.PlanEntry
}

// Mode is a session mode the agent offers.
type Mode struct {
	ID          string
	Name        string
	Description string
}

// Model is a model the agent offers.
type Model struct {
	ID          string
	Name        string
	Description string
}

// Meta is the session's capabilities at one moment: modes, models, slash
// commands and config options, and the current mode and model.
type Meta struct {
	Modes        []Mode
	CurrentMode  string
	Models       []Model
	CurrentModel string
	Commands     []projector.Command
	Config       []projector.ConfigOption
}

// ModeChange records a switch of the session's mode.
type ModeChange struct {
	Previous string
	New      string
}

func (Message) entryType() EntryType         { return TypeMessage }
func (Thought) entryType() EntryType         { return TypeThought }
func (ToolCall) entryType() EntryType        { return TypeToolCall }
func (PermissionEntry) entryType() EntryType { return TypePermission }
func (Plan) entryType() EntryType            { return TypePlan }
func (Meta) entryType() EntryType            { return TypeMeta }
func (ModeChange) entryType() EntryType      { return TypeModeChange }
