package channels

import (
	"strings"
	"unicode"
)

// IntentKind says what a person meant by an inbound event. Exactly one
// kind applies to each event (Inbound.Intent).
type IntentKind int

const (
	// IntentInvalid marks an event with more than one of Choice, Stop,
	// Command and Closed set: an adapter's mistake, which the gateway
	// ignores.
	IntentInvalid IntentKind = iota
	// IntentMessage is a prompt for the agent: Text and Files.
	IntentMessage
	// IntentStop asks to stop the thread's running turn (Inbound.Stop).
	IntentStop
	// IntentChoice answers a prompt's buttons (Inbound.Choice).
	IntentChoice
	// IntentCommand is one of the gateway's own commands
	// (Inbound.Command).
	IntentCommand
	// IntentClose says the thread was deleted (Inbound.Closed): its
	// turn stops, its agent ends and its binding is forgotten.
	IntentClose
	// IntentSuggest asks for values of a command's argument as people
	// type it (Inbound.Suggest with Inbound.Command).
	IntentSuggest
	// IntentForm answers a form (Inbound.Form).
	IntentForm
	// IntentReaction is a reaction added or removed (Inbound.Reaction).
	IntentReaction
	// IntentArchive says the thread was archived (Inbound.Archived).
	IntentArchive
	// IntentMissed says a catch-up read more messages than it runs
	// (Inbound.Missed).
	IntentMissed
)

func (k IntentKind) String() string {
	switch k {
	case IntentMessage:
		return "message"
	case IntentStop:
		return "stop"
	case IntentChoice:
		return "choice"
	case IntentCommand:
		return "command"
	case IntentClose:
		return "close"
	case IntentSuggest:
		return "suggest"
	case IntentForm:
		return "form"
	case IntentReaction:
		return "reaction"
	case IntentArchive:
		return "archive"
	case IntentMissed:
		return "missed"
	}
	return "invalid"
}

// Intent returns what in means: a choice, a stop, a command (or a
// request for suggestions, a command with Suggest), a close, a form's
// answer or a reaction when exactly one of Choice, Stop, Command, Closed,
// Form and Reaction is set, a message when none is, and IntentInvalid
// when more than one is (or Suggest comes without a Command).
func (in Inbound) Intent() IntentKind {
	kind, n := IntentMessage, 0
	if in.Choice != nil {
		kind, n = IntentChoice, n+1
	}
	if in.Stop {
		kind, n = IntentStop, n+1
	}
	if in.Command != nil {
		kind, n = IntentCommand, n+1
		if in.Suggest != nil {
			kind = IntentSuggest
		}
	} else if in.Suggest != nil {
		n += 2 // suggestions for no command: invalid
	}
	if in.Closed {
		kind, n = IntentClose, n+1
	}
	if in.Form != nil {
		kind, n = IntentForm, n+1
	}
	if in.Reaction != nil {
		kind, n = IntentReaction, n+1
	}
	if in.Archived {
		kind, n = IntentArchive, n+1
	}
	if in.Missed != nil {
		kind, n = IntentMissed, n+1
	}
	if n > 1 {
		return IntentInvalid
	}
	return kind
}

// Command is one of the gateway's own commands, which a person gives by
// starting a message with "/name".
type Command struct {
	// Name is one of the Command* names, lower case, without the slash.
	Name string
	// Args is the rest of the message, spaces around it trimmed.
	Args string
}

// The names of the gateway's commands.
const (
	// CommandStop stops the thread's running turn, like a stop word,
	// and works with stop words turned off.
	CommandStop = "stop"
	// CommandUsage shows the thread's turns, tokens and cost, the
	// channel's today, and how much of each budget is used.
	CommandUsage = "usage"
	// CommandWorkspace shows the thread's working directory and, for a
	// git worktree, its branch.
	CommandWorkspace = "workspace"
	// CommandDiff shows git diff --stat of the thread's worktree since
	// its start, and the full diff as a file.
	CommandDiff = "diff"
	// CommandStatus shows the thread's session: agent, model, mode,
	// effort, context, cost, the running turn and the queue.
	CommandStatus = "status"
	// CommandNew starts a new ACP session in the thread.
	CommandNew = "new"
	// CommandModel, CommandMode and CommandEffort show or set the config
	// option of category model, mode and thought_level.
	CommandModel  = "model"
	CommandMode   = "mode"
	CommandEffort = "effort"
	// CommandSet shows the session's config options, or sets one
	// ("NAME VALUE").
	CommandSet = "set"
	// CommandAgent shows the agents a thread may move to, or moves it to
	// one (a new session).
	CommandAgent = "agent"
	// CommandSessions lists the agent's sessions (session/list).
	CommandSessions = "sessions"
	// CommandAttach binds one of the agent's sessions to the thread.
	CommandAttach = "attach"
	// CommandHelp lists the gateway's commands and the agent's own.
	CommandHelp = "help"
)

// ParseCommand returns the gateway command text gives, nil when it gives
// none. A command is a message that starts (after spaces) with "/" and a
// name the gateway knows, in any case, followed by the end of the text or
// a space. Any other "/text" is a prompt for the agent: agents have slash
// commands of their own ("/compact"). Adapters call it on what a person
// wrote, after removing a mention of the bot.
func ParseCommand(text string) *Command {
	s := strings.TrimLeftFunc(text, unicode.IsSpace)
	rest, ok := strings.CutPrefix(s, "/")
	if !ok {
		return nil
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		end = len(rest)
	}
	name := rest[:end]
	for _, c := range catalogue {
		if asciiEqualFold(name, c.Name) {
			return &Command{Name: c.Name, Args: strings.TrimSpace(rest[end:])}
		}
	}
	return nil
}

// asciiEqualFold reports whether s and t are equal ignoring the case of
// ASCII letters only (so that no other script's letter folds into a
// command's name, as U+017F "ſ" does into "s" under Unicode folding).
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range len(s) {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
