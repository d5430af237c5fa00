package sysmsg

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/tooldisplay"
)

// The answers to the gateway's commands (/status, /model, /new, …).

// Status answers /status: the thread's agent and session.
type Status struct {
	// Agent is the agent's name; Running: its process runs.
	Agent   string
	Running bool
	// Model, Mode and Effort are the current values' names, "" unknown.
	Model, Mode, Effort string
	// ContextUsed and ContextSize are tokens, known when ContextKnown.
	ContextUsed, ContextSize int64
	ContextKnown             bool
	// Cost is the session's cost so far in Currency, when CostKnown.
	Cost      float64
	Currency  string
	CostKnown bool
	// Turn: a turn runs, started by TurnBy TurnFor ago; Starting: its
	// agent is still starting.
	Turn     bool
	Starting bool
	TurnBy   string
	TurnFor  time.Duration
	// Queued messages wait.
	Queued int
	// Switches are the session's boolean options (ACP 1.33).
	Switches []Switch
}

// Switch is a boolean option's name and value, as /status shows it.
type Switch struct {
	Name string
	On   bool
}

// The words of a boolean option's two values (/set NAME on|off).
const (
	SwitchOn  = "on"
	SwitchOff = "off"
)

func (s Status) Body() string {
	var b strings.Builder
	b.WriteString("Agent: " + orUnknown(s.Agent))
	if !s.Running {
		b.WriteString(" (not running; the next message starts it)")
	}
	for _, f := range [][2]string{{"Model", s.Model}, {"Mode", s.Mode}, {"Effort", s.Effort}} {
		if f[1] != "" {
			b.WriteString(" · " + f[0] + ": " + f[1])
		}
	}
	for _, sw := range s.Switches {
		v := SwitchOff
		if sw.On {
			v = SwitchOn
		}
		b.WriteString(" · " + sw.Name + ": " + v)
	}
	if s.ContextKnown && s.ContextSize > 0 {
		fmt.Fprintf(&b, " · Context: %s of %s (%s)", tokens(s.ContextUsed), tokens(s.ContextSize), Share(s.ContextUsed, s.ContextSize))
	}
	if s.CostKnown {
		fmt.Fprintf(&b, " · Cost: %.2f %s", s.Cost, s.Currency)
	} else {
		b.WriteString(" · Cost: unknown")
	}
	switch {
	case s.Starting:
		b.WriteString(" · Starting a turn for " + Who(s.TurnBy, ""))
	case s.Turn:
		b.WriteString(" · Running a turn for " + Who(s.TurnBy, "") + " since " + roundDuration(s.TurnFor).String())
	default:
		b.WriteString(" · Idle")
	}
	if s.Queued > 0 {
		fmt.Fprintf(&b, " · Queued: %d", s.Queued)
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// tokens writes a token count shortly: 950, 31k, 1.2M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// HelpLine is one command /help lists: its name, its argument ("" none)
// and what it does.
type HelpLine struct {
	Name, Arg, Description string
}

// Help answers /help: the gateway's commands and the agent's own. Hidden
// are the agent's own whose names a gateway command takes: typed, they
// run the gateway's, so they never reach the agent.
type Help struct {
	Gateway, Agent, Hidden []HelpLine
}

func (h Help) Body() string {
	var b strings.Builder
	b.WriteString("Commands:")
	line := func(l HelpLine) {
		b.WriteString("\n/" + l.Name)
		if l.Arg != "" {
			b.WriteString(" [" + l.Arg + "]")
		}
		if l.Description != "" {
			b.WriteString(" — " + l.Description)
		}
	}
	for _, l := range h.Gateway {
		line(l)
	}
	if len(h.Agent) > 0 {
		b.WriteString("\nThe agent's own (sent to it as a message):")
		for _, l := range h.Agent {
			line(l)
		}
	}
	if len(h.Hidden) > 0 {
		names := make([]string, len(h.Hidden))
		for i, l := range h.Hidden {
			names[i] = "/" + l.Name
		}
		b.WriteString("\nThe agent also has " + strings.Join(names, ", ") + ", but the gateway's commands of the same name take them: typed here, they do not reach the agent.")
	}
	return b.String()
}

// Choices lists the values of a session option (the model, the mode, …)
// with the current one marked, and how to pick one with Command.
type Choices struct {
	Option  string // "model"
	Command string // "/model"
	Current string // the current value's id
	Values  []string
	// Names are the values' names, as shown (Values' ids where one is
	// missing).
	Names []string
	// Pick: the values are buttons or a select to pick from.
	Pick bool
}

// name is the name of value id.
func (c Choices) name(id string) string {
	for i, v := range c.Values {
		if v == id && i < len(c.Names) && c.Names[i] != "" {
			return c.Names[i]
		}
	}
	return id
}

func (c Choices) Body() string {
	if c.Pick {
		return fmt.Sprintf("Pick the %s (now %s):", c.Option, c.name(c.Current))
	}
	vals := make([]string, len(c.Values))
	for i, v := range c.Values {
		vals[i] = c.name(v)
		if v == c.Current {
			vals[i] += " (current)"
		}
	}
	return fmt.Sprintf("The %s: %s. Say %s NAME to switch.", c.Option, strings.Join(vals, ", "), c.Command)
}

// ChoiceLabel is the label of a value to pick, the current one marked.
func ChoiceLabel(name string, current bool) string {
	if current {
		return name + " (current)"
	}
	return name
}

// OptionSet confirms that By set Option to Value. Later: no agent runs;
// it applies when the agent starts.
type OptionSet struct {
	Option, Value, By string
	Later             bool
}

func (o OptionSet) Body() string {
	s := fmt.Sprintf("%s set the %s to %s.", Who(o.By, ""), o.Option, o.Value)
	if o.Later {
		s += " It applies when the agent starts."
	}
	return s
}

// BadValue: Value is not one of Option's Values (Option "": Value is no
// session option, and Values are the options there are).
type BadValue struct {
	Option, Value string
	Values        []string
}

func (v BadValue) Body() string {
	if v.Option == "" {
		v.Option = "session option"
	}
	if len(v.Values) == 0 {
		return fmt.Sprintf("%q is not a %s here, and there is nothing to choose from.", v.Value, v.Option)
	}
	return fmt.Sprintf("%q is not a %s here. Choose one of: %s.", v.Value, v.Option, strings.Join(v.Values, ", "))
}

// NoOption: the agent has no Option to set (NotStarted: its options are
// not known yet, since it has not run in this thread).
type NoOption struct {
	Option     string
	NotStarted bool
}

func (n NoOption) Body() string {
	if n.NotStarted {
		return fmt.Sprintf("The agent's %s is known once it runs: send a message first.", n.Option)
	}
	return fmt.Sprintf("This agent has no %s to choose.", n.Option)
}

// SetFailed: the agent refused to set Option, for Err; AgentSays is the
// agent's own text when it answered with an error (Code), shown as its
// words.
type SetFailed struct {
	Option, Err string
	Code        int
	AgentSays   string
}

func (f SetFailed) Body() string {
	if f.AgentSays != "" {
		says := f.AgentSays
		if utf8.RuneCountInString(says) > maxAgentSays {
			says = string([]rune(says)[:maxAgentSays]) + "…"
		}
		return fmt.Sprintf("Could not set the %s: the agent refused (error %d). The agent says: %s", f.Option, f.Code, tooldisplay.CodeSpan(tooldisplay.Visible(says)))
	}
	return fmt.Sprintf("Could not set the %s: %s", f.Option, f.Err)
}

// NewStarted confirms /new: By ended the session; the next message starts
// a new one (of Agent, when By moved the thread to it with /agent), or
// continues session Attach (/attach).
type NewStarted struct{ By, Agent, Attach string }

func (n NewStarted) Body() string {
	switch {
	case n.Attach != "":
		return fmt.Sprintf("%s attached session %s to this thread; the next message continues it (its history is not posted here).", Who(n.By, ""), n.Attach)
	case n.Agent != "":
		return fmt.Sprintf("%s moved this thread to %s; the next message starts a new session.", Who(n.By, ""), n.Agent)
	}
	return Who(n.By, "") + " ended this thread's session; the next message starts a new one."
}

// AttachBound: session ID is already a thread's of this gateway (Here:
// this one's), so /attach does not take it.
type AttachBound struct {
	ID   string
	Here bool
}

func (a AttachBound) Body() string {
	if a.Here {
		return fmt.Sprintf("Session %s is already this thread's.", a.ID)
	}
	return fmt.Sprintf("Session %s belongs to another thread here; /attach takes sessions started elsewhere (a terminal, an editor).", a.ID)
}

// AttachGone: session ID was a deleted thread's, so /attach does not
// take it (a deleted thread's session is never resumed).
type AttachGone struct{ ID string }

func (a AttachGone) Body() string {
	return fmt.Sprintf("Session %s belonged to a thread that was deleted; a deleted thread's session is never resumed.", a.ID)
}

// SessionLine is one session of the agent /sessions lists.
type SessionLine struct{ ID, Title, Updated string }

// Sessions answers /sessions: the agent's sessions, newest as the agent
// lists them. NotStarted: no agent runs to ask; Unsupported: the agent
// cannot list them.
type Sessions struct {
	List                    []SessionLine
	NotStarted, Unsupported bool
}

// maxSessionLines bounds the sessions /sessions lists.
const maxSessionLines = 20

func (s Sessions) Body() string {
	switch {
	case s.NotStarted:
		return "The agent is not running here: send a message first, then ask again."
	case s.Unsupported:
		return "This agent cannot list its sessions."
	case len(s.List) == 0:
		return "The agent has no sessions to attach."
	}
	var b strings.Builder
	b.WriteString("The agent's sessions (say /attach ID to continue one here):")
	for i, l := range s.List {
		if i == maxSessionLines {
			fmt.Fprintf(&b, "\n… and %d more", len(s.List)-i)
			break
		}
		b.WriteString("\n" + l.ID)
		if l.Title != "" {
			b.WriteString(" — " + l.Title)
		}
		if l.Updated != "" {
			b.WriteString(" (" + shownTime(l.Updated) + ")")
		}
	}
	return b.String()
}

// shownTime is an agent's ISO 8601 time to the minute, in UTC
// ("2026-12-02 15:20 UTC"; agents send nanoseconds); as it came when it
// does not parse.
func shownTime(iso string) string {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return iso
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// CommandBusy: Command waits for the thread to be idle.
type CommandBusy struct{ Command string }

func (c CommandBusy) Body() string {
	return fmt.Sprintf("%s cannot run while a turn runs or waits: stop it first (say \"stop\").", c.Command)
}

// RefuseCommand: the person may not give Command here.
type RefuseCommand struct{ Command string }

func (r RefuseCommand) Body() string {
	return fmt.Sprintf("Sorry, only operators can use %s here.", r.Command)
}

// SharePercent is used as a share of size in whole per cent, rounded to
// the nearest (half up): the one rule of every context share shown (the
// footer, the usage line, /status, the web chat's header). size must be
// above 0.
func SharePercent(used, size int64) int64 {
	if size <= 0 {
		return 0
	}
	return (used*200 + size) / (2 * size)
}

// Share writes used as a share of size, rounded (SharePercent): "42%",
// and "<1%" for a share above 0 and under 1 % (2,140 of 258,400).
func Share(used, size int64) string {
	if used > 0 && used*100 < size {
		return "<1%"
	}
	return strconv.FormatInt(SharePercent(used, size), 10) + "%"
}
