package channels

import "context"

// Steering a session from the chat: the gateway's commands as each
// platform shows them (registered application commands, a palette), the
// agent's questions as forms, reactions as status and controls, and what
// a thread's session is (agent, model, mode, context) for platforms that
// show it. Session decides what each does; adapters only show and
// deliver (see ARCHITECTURE.md).

// CommandInfo describes one command people can give in a thread, for
// platforms that register or list commands (Discord's application
// commands, the web chat's palette, /help).
type CommandInfo struct {
	// Name is the command's name without the slash, lower case.
	Name string
	// Description says what it does, in one short line (at most 100
	// characters, Discord's limit).
	Description string
	// Arg is the command's one optional argument, nil when it takes none.
	Arg *CommandArg
	// Agent marks a command of the agent's own (available_commands_update):
	// it reaches the agent as a prompt; the gateway does not handle it.
	Agent bool
}

// CommandArg describes a command's argument.
type CommandArg struct {
	// Name is the argument's name ("model"), Description its one-line
	// help.
	Name        string
	Description string
	// Required is set when the command needs a value.
	Required bool
	// Suggest is set when the gateway can suggest values as people type
	// (Inbound.Suggest): a model, a mode, an agent's name.
	Suggest bool
}

// Commands returns the gateway's own commands, in the order /help lists
// them. The list is the one ParseCommand knows.
func Commands() []CommandInfo {
	out := make([]CommandInfo, len(catalogue))
	for i, c := range catalogue {
		out[i] = c
		if c.Arg != nil {
			a := *c.Arg
			out[i].Arg = &a
		}
	}
	return out
}

// catalogue holds the gateway's commands. Issue 14 adds a command here
// once session handles it; ParseCommand knows exactly these names.
var catalogue = []CommandInfo{
	{Name: CommandStop, Description: "Stop the running turn"},
	{Name: CommandStatus, Description: "Show the agent, model, mode, effort, context, cost, the running turn and the queue"},
	{Name: CommandNew, Description: "Start a new agent session in this thread"},
	{Name: CommandModel, Description: "Show or set the agent's model", Arg: &CommandArg{Name: "model", Description: "The model to use", Suggest: true}},
	{Name: CommandMode, Description: "Show or set the agent's mode", Arg: &CommandArg{Name: "mode", Description: "The mode to use", Suggest: true}},
	{Name: CommandEffort, Description: "Show or set how hard the agent thinks", Arg: &CommandArg{Name: "effort", Description: "The thinking level", Suggest: true}},
	{Name: CommandSet, Description: "Show the session's options, or set one: /set NAME VALUE", Arg: &CommandArg{Name: "option", Description: "The option's id and its value", Suggest: true}},
	{Name: CommandAgent, Description: "Show the agents, or move this thread to another agent (a new session)", Arg: &CommandArg{Name: "agent", Description: "The agent's name", Suggest: true}},
	{Name: CommandSessions, Description: "List the agent's sessions, to attach one here"},
	{Name: CommandAttach, Description: "Continue one of the agent's sessions in this thread", Arg: &CommandArg{Name: "session", Description: "The session's id (see /sessions)", Suggest: true}},
	{Name: CommandUsage, Description: "This thread's turns, tokens and spend; the channel's today; the budgets"},
	{Name: CommandWorkspace, Description: "Show this thread's working directory (and its branch)"},
	{Name: CommandDiff, Description: "Show what this thread's worktree changed, with the full diff as a file"},
	{Name: CommandHelp, Description: "List the gateway's commands and the agent's own"},
}

// Commander is implemented by adapters whose platform registers commands
// (Discord's application commands). SetCommands replaces the commands
// registered for the adapter's spaces (or globally) with cmds. It blocks
// on I/O; the gateway calls it at start and when the agent's commands
// change.
type Commander interface {
	SetCommands(ctx context.Context, cmds []CommandInfo) error
}

// SuggestFunc answers a request for suggestions (Inbound.Suggest) with
// at most 25 options, best first, within the platform's deadline (about
// 3 s for Discord's autocomplete). It blocks on I/O.
type SuggestFunc func(ctx context.Context, options []Option) error

// Form is a question with fields, such as an agent's question
// (elicitation): shown as a modal opened from a button (Discord, Slack)
// or as a form in the page (web chat).
type Form struct {
	// Title is the form's title (at most 45 characters on Discord), Text
	// the question in Markdown.
	Title string
	Text  string
	// Fields are the form's fields, in order; none for a URL form.
	Fields []Field
	// URL, if set, makes this a URL form: a link to open, then Done or
	// Decline.
	URL string
}

// FieldKind is the kind of a form's field.
type FieldKind uint8

// The kinds of fields.
const (
	FieldText   FieldKind = iota + 1 // a line or lines of text
	FieldNumber                      // a number (Min, Max)
	FieldChoice                      // one of Options
	FieldMulti                       // any of Options
	FieldBool                        // yes or no
)

// Field is one field of a Form.
type Field struct {
	ID       string
	Label    string
	Help     string
	Kind     FieldKind
	Required bool
	// Options are the values of a choice or multi field.
	Options []Option
	// Default is the value shown at first ("" none); for a multi field,
	// option ids separated by commas.
	Default string
	// Min and Max bound a number field, or the length of a text field;
	// nil: no bound.
	Min, Max *float64
	// Multiline asks for a paragraph rather than one line (text fields).
	Multiline bool
}

// FormAction is what a person did with a form.
type FormAction string

// The form actions.
const (
	FormAccept  FormAction = "accept"  // submitted (Values hold the answer)
	FormDecline FormAction = "decline" // declined to answer
	FormCancel  FormAction = "cancel"  // dismissed
)

// FormAnswer is a person's answer to a form the gateway showed.
type FormAnswer struct {
	Form   Handle
	Action FormAction
	// Values are the fields' values by field id: the text, the number as
	// written, the chosen option ids, "true"/"false".
	Values map[string][]string
}

// Former is implemented by adapters that can ask a Form. Form shows f in
// thread t and returns its handle; the answer comes back through Run's
// handler as Inbound.Form. The gateway folds an answered form to one
// line with Editor.Edit. It blocks on I/O.
type Former interface {
	Form(ctx context.Context, t ThreadRef, f Form) (Handle, error)
}

// Reaction is a reaction a person added to, or removed from, a message
// of the thread.
type Reaction struct {
	Message MessageID
	// Emoji is the emoji itself ("🛑"), or a platform's name for a custom
	// one.
	Emoji   string
	Removed bool
}

// Reactor is implemented by adapters that can react to messages with an
// emoji (the gateway marks a person's message as taken, queued, done).
// React adds the app's reaction emoji to message h, Unreact removes it;
// both block on I/O and return a *RateLimitError when the platform asks
// to wait.
type Reactor interface {
	React(ctx context.Context, h Handle, emoji string) error
	Unreact(ctx context.Context, h Handle, emoji string) error
}

// SessionInfo is what a thread's session is, for adapters that show it
// (the web chat's header).
type SessionInfo struct {
	Agent string
	// Model, Mode and Effort are the current values' names, "" unknown.
	Model, Mode, Effort string
	// ContextUsed and ContextSize are tokens; 0 unknown.
	ContextUsed, ContextSize int
	// Cost is the session's cost so far in Currency ("" unknown).
	Cost     float64
	Currency string
	// Settings are the session's config options people may change.
	Settings []Setting
	// Commands are the commands people can give here: the gateway's and
	// the agent's own.
	Commands []CommandInfo
}

// Setting is one config option of a session (model, mode, effort, …).
type Setting struct {
	// ID is the option's id; Category its kind ("model", "mode",
	// "thought_level", "" other); Name its label.
	ID, Category, Name string
	// Current is the id of the current value.
	Current string
	Values  []Option
}

// SessionShower is implemented by adapters that show a thread's session
// (the web chat's header). ShowSession is called when it changes; it
// must not block or do I/O.
type SessionShower interface {
	ShowSession(t ThreadRef, s SessionInfo)
}

// The emoji of the gateway's own reactions on a person's message (Reactor),
// and the one people react with to stop a turn.
const (
	ReactQueued  = "⏳"  // waits behind another message
	ReactTaken   = "👀"  // its turn is starting or running
	ReactStalled = "⚠️" // its turn has been silent for reactions.stallAfter
	ReactDone    = "✅"  // its turn ended
	ReactFailed  = "❌"  // its turn failed (an error, the agent exited)
	ReactStopped = "⏹️" // its turn was stopped, or it was dropped unrun
	// ReactStop, added by a person allowed to stop on the prompt or on a
	// message of the running turn, stops the turn as the word does.
	ReactStop = "🛑"
)

// IsStopReaction reports whether emoji is ReactStop, with or without the
// emoji variation selector.
func IsStopReaction(emoji string) bool {
	return emoji == ReactStop || emoji == ReactStop+"\ufe0f"
}

// TurnEnder is implemented by adapters that want to hear when a turn's
// last output has been delivered in thread t (Slack closes its open
// stream then). The gateway calls it through the thread's delivery lane,
// after the turn's last message; it blocks on I/O. Errors are the
// adapter's to log.
type TurnEnder interface {
	TurnEnded(ctx context.Context, t ThreadRef)
}

// SetArgs is the arguments of /set for option id and value ("/set ID
// VALUE").
func SetArgs(id, value string) string { return id + " " + value }
