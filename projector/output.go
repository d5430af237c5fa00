package projector

// Output is one thing the projector wants people to see, in order. It is a
// closed set: Text, Thought, Tool, Status, Notice, Plan, Image, TurnEnd. Handle it
// with a type switch.
type Output interface{ isOutput() }

// Text is a piece of the assistant's reply, to append to what was delivered
// before. The concatenation of all Text of a turn is the visible reply.
type Text struct {
	Text string
	// NewMessage is set on the first piece of a new agent message (a new
	// messageId); dispatch may start a new chat message there.
	NewMessage bool
}

// Thought is a piece of the agent's visible reasoning, to append to the
// turn's current thought.
type Thought struct{ Text string }

// Tool is the current line of one tool call. Later Tool outputs with the
// same ID are new states of the same line (edit in place where possible).
type Tool struct {
	ID   ToolCallID
	Text string
	// Status is the merged status the line shows.
	Status ToolStatus
	// First marks the first line emitted for ID in this turn.
	First bool
	// CutOff is the line as it must read if the turn is cut off before
	// the tool ends (its status cancelled), for a line that is not
	// terminal; "" for a terminal one. The lane keeps it, so that the
	// message can be edited to it by whoever takes the thread up after
	// the process that posted it died.
	CutOff string
}

// Status is a one-line meta report (usage, a mode change, an unknown update
// in verbose mode), already prefixed through sysmsg.
type Status struct {
	// Tag is the raw sessionUpdate tag it came from.
	Tag  string
	Text string
}

// Notice is a system notice from the gateway itself (truncation, a hidden
// flood, a cancelled or failed turn), already prefixed through sysmsg.
type Notice struct {
	Text string
	// Reason says why it was emitted.
	Reason NoticeReason
}

// NoticeReason classifies a Notice.
type NoticeReason uint8

// Why a Notice was emitted.
const (
	NoticeTruncated NoticeReason = iota + 1
	NoticeMetaCap
	NoticeModeChange
	NoticeTurnFailed
	NoticeTurnStopped
	// ACP 1.33: the agent's own notice, and the one line saying the next
	// ones outside a turn are hidden.
	NoticeAgent
	NoticeAgentHidden
)

// Plan is the turn's plan rendered as a checklist. Later Plan outputs of the
// same turn replace it (edit in place).
type Plan struct{ Text string }

// TurnEnd is the last output of a turn.
type TurnEnd struct {
	// StopReason is the agent's stopReason ("end_turn", "cancelled", ...),
	// "" when the prompt failed with an error.
	StopReason string
	// Err is the error text when the prompt failed.
	Err string
}

func (Text) isOutput()    {}
func (Thought) isOutput() {}
func (Tool) isOutput()    {}
func (Status) isOutput()  {}
func (Notice) isOutput()  {}
func (Plan) isOutput()    {}
func (TurnEnd) isOutput() {}
