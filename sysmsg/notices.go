package sysmsg

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/tooldisplay"
)

// The gateway's sentences. Each is a type that carries the facts of one
// outcome (who stopped a turn, how many messages wait, …) and renders
// itself; code that decides what happened builds the value and never
// writes the words. A [Notice] stands on its own (Text adds the mark); an
// [Outcome] ends the text of a permission prompt once it is settled
// ([Settled]). Every variant is in testdata/messages.txtar.

// Notice is a system notice. Body is its sentence without the mark.
type Notice interface {
	Body() string
}

// Text renders n as people read it: its sentence, marked ([Prefix]).
func Text(n Notice) string { return Prefix(n.Body()) }

// Outcome is how a permission prompt was settled; Line is the line that
// ends the prompt's text.
type Outcome interface {
	Line() string
}

// Settled is the text of a settled prompt: its text, then its outcome.
func Settled(prompt string, o Outcome) string { return prompt + "\n\n" + o.Line() }

// Who names a person in a sentence: by name, else by id, else
// "someone".
func Who(name, id string) string {
	if name != "" {
		return name
	}
	if id != "" {
		return id
	}
	return "someone"
}

// TheAgent is how sentences name the agent where it acts like a person
// (it cancelled a prompt it had asked).
const TheAgent = "the agent"

// Queued: a prompt waits behind Ahead others (the running turn counts);
// Stopping: the running turn is being stopped already.
type Queued struct {
	Ahead    int
	Stopping bool
}

func (q Queued) Body() string {
	if q.Stopping {
		return fmt.Sprintf("Queued: %d ahead of it. It runs once the turn being stopped has ended.", q.Ahead)
	}
	return fmt.Sprintf("Queued: %d ahead of it. It runs when the current turn ends; say \"stop\" to cancel the turn.", q.Ahead)
}

// QueuedRan is a Queued notice once its prompt's turn has started.
type QueuedRan struct{}

func (QueuedRan) Body() string { return "Was queued; its turn has started." }

// QueuedDropped is a Queued notice once a stop dropped its prompt.
type QueuedDropped struct{}

func (QueuedDropped) Body() string { return "Was queued; the stop dropped it." }

// WaitingForAgent: every agent process slot is busy; Ahead other threads
// wait before this one.
type WaitingForAgent struct{ Ahead int }

func (w WaitingForAgent) Body() string {
	if w.Ahead == 0 {
		return "Waiting for a free agent: every agent is working; yours starts as soon as one is free."
	}
	return fmt.Sprintf("Waiting for a free agent: %d ahead of you.", w.Ahead)
}

// Busy: the platform's rate limits hold back the first answer of a
// thread, behind Ahead other threads' (a burst of mentions).
type Busy struct{ Ahead int }

func (b Busy) Body() string {
	switch b.Ahead {
	case 0:
		return "Busy: this thread is next; the platform's rate limits hold its answer for a moment."
	case 1:
		return "Busy: 1 thread ahead of this one. The platform's rate limits let answers start a few at a time; this one follows in turn."
	}
	return fmt.Sprintf("Busy: %d threads ahead of this one. The platform's rate limits let answers start a few at a time; this one follows in turn.", b.Ahead)
}

// QueueKept tells the person who stopped that Waiting queued messages
// stay and run next (a stop ends the running turn only).
type QueueKept struct{ Waiting int }

func (q QueueKept) Body() string {
	if q.Waiting == 1 {
		return "1 queued message stays and runs next; say `stop all` to drop it too."
	}
	return fmt.Sprintf("%d queued messages stay and run next; say `stop all` to drop them too.", q.Waiting)
}

// NothingRunning answers a stop with no turn running; Dropped queued
// messages were dropped.
type NothingRunning struct{ Dropped int }

func (n NothingRunning) Body() string {
	if n.Dropped > 0 {
		return fmt.Sprintf("Nothing was running; dropped %d queued message(s).", n.Dropped)
	}
	return "Nothing is running."
}

// Stopping is said as soon as someone stops a turn; the turn's [Stopped]
// replaces it. By and Interrupt are those of the Stopped to come: where a
// channel cannot edit, the thread is told Done at once instead, so that
// one stop is one notice.
type Stopping struct {
	By        string
	Interrupt bool
}

func (Stopping) Body() string { return "Stopping…" }

// Done is the notice that ends the stopped turn, unless the agent has to
// be killed (which Stopped.Killed says).
func (s Stopping) Done() Stopped { return Stopped{By: s.By, Interrupt: s.Interrupt} }

// Stopped ends a turn someone stopped: By names them. Interrupt: a new
// message under the interrupt policy stopped it. Killed: the agent
// ignored the cancel for Grace and was restarted.
type Stopped struct {
	By        string
	Interrupt bool
	Killed    bool
	Grace     time.Duration
}

func (s Stopped) Body() string {
	text := "Stopped by " + s.By + "."
	if s.Interrupt {
		text = "Interrupted by a new message from " + s.By + "."
	}
	if s.Killed {
		text += fmt.Sprintf(" The agent did not stop within %s, so it was restarted.", s.Grace)
	}
	return text
}

// StoppedBeforeStart: By stopped a prompt while its agent was starting.
type StoppedBeforeStart struct{ By string }

func (s StoppedBeforeStart) Body() string { return "Stopped by " + s.By + " before the agent began." }

// StartTimeout: the agent did not start within After.
type StartTimeout struct{ After time.Duration }

func (s StartTimeout) Body() string {
	return fmt.Sprintf("The agent did not start within %v, so it was stopped. Your next message tries again.", s.After)
}

// EnvWithheld: the agent was started without the environment variable
// Name, which its configuration gives or lets it inherit, for Why (the
// rule that kept it back: "the value is one of the gateway's secrets").
type EnvWithheld struct{ Name, Why string }

func (e EnvWithheld) Body() string {
	return fmt.Sprintf("The agent was started without the environment variable %s: %s. Give each agent its own value in its configuration (agents.list) if it needs one.", Code(e.Name), e.Why)
}

// StartFailed: the agent could not be started, for Err. When the agent
// itself refused (its answer to Method was error Code), AgentSays is its
// own text, shown bounded and as its words; NoAuth: it asked for an
// authentication it offers no method for.
type StartFailed struct {
	Err       string
	Method    string
	Code      int
	NoAuth    bool
	AgentSays string
}

// maxAgentSays bounds the agent's text a StartFailed shows.
const maxAgentSays = 600

func (s StartFailed) Body() string {
	if s.AgentSays == "" {
		return "Couldn't start the agent: " + s.Err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Couldn't start the agent: it answered %s with error %d", s.Method, s.Code)
	if s.NoAuth {
		b.WriteString(", asking to authenticate in a way the gateway cannot (it offers no method over ACP)")
	}
	says := s.AgentSays
	if utf8.RuneCountInString(says) > maxAgentSays {
		says = string([]rune(says)[:maxAgentSays]) + "…"
	}
	b.WriteString(". The agent says: " + tooldisplay.CodeSpan(tooldisplay.Visible(says)))
	return b.String()
}

// Crashed is why a turn failed whose agent process exited (Exit says
// how, e.g. "exit status 2"). Its Reason is the turn's error: the store
// records it, and people read it in the turn's [Failed] notice.
type Crashed struct{ Exit string }

func (c Crashed) Reason() string {
	return "its process exited (" + c.Exit + "). Your next message starts it again."
}

// Failed ends a turn whose prompt failed, for Err.
type Failed struct{ Err string }

func (f Failed) Body() string { return "The agent failed: " + f.Err }

// Ended ends a turn the agent ended for StopReason, its ACP stopReason,
// when that is worth a word: nothing for "end_turn" (or none).
// AfterRejection: a permission of the turn was rejected (answered or
// expired with a reject option); an agent that then cancels the turn
// (Codex) did so itself, nobody stopped it.
type Ended struct {
	StopReason     string
	AfterRejection bool
}

func (e Ended) Body() string {
	switch e.StopReason {
	case "", "end_turn":
		return ""
	case "cancelled":
		if e.AfterRejection {
			return "The agent ended the turn after the rejection."
		}
		return "Stopped."
	case "max_tokens":
		return "The agent stopped: it reached its output token limit (max_tokens)."
	case "max_turn_requests":
		return "The agent stopped: it reached its limit of model requests for one turn (max_turn_requests)."
	case "refusal":
		return "The agent refused to continue (refusal)."
	}
	return "The agent stopped (" + e.StopReason + ")."
}

// Stalled: the agent of a running turn said nothing for For.
type Stalled struct{ For time.Duration }

func (s Stalled) Body() string {
	return fmt.Sprintf("No output from the agent for %s. Say \"stop\" to cancel the turn.", HumanDuration(s.For))
}

// HumanDuration writes d in words where it is whole hours, minutes or
// seconds ("5 minutes"), else as time.Duration does.
func HumanDuration(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d >= time.Second && d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	}
	return d.String()
}

// Interrupted: a stop of the gateway cut a turn off. AtStart: told at the
// next start (the shutdown could not, or there was none: a crash, a
// kill); else told by the shutdown.
type Interrupted struct{ AtStart bool }

func (i Interrupted) Body() string {
	if i.AtStart {
		return "Interrupted: the gateway restarted while the agent was working on this, so its answer stopped short. Send your message again."
	}
	return "Interrupted: the gateway is restarting. Send your message again when it is back."
}

// NewSession: the thread's earlier session is not resumed, so the agent
// does not remember it. CannotResume: the agent cannot resume sessions at
// all; else resuming failed.
type NewSession struct{ CannotResume bool }

func (n NewSession) Body() string {
	if n.CannotResume {
		return "This agent cannot resume sessions, so this is a new session: it does not remember the earlier conversation."
	}
	return "Couldn't resume the earlier session, so this is a new one: the agent does not remember the earlier conversation."
}

// NotSaved: the thread's binding could not be stored.
type NotSaved struct{}

func (NotSaved) Body() string {
	return "This conversation could not be saved; it will not survive a restart."
}

// CatchUp: N messages sent while the gateway was down are answered, in
// order.
type CatchUp struct{ N int }

func (c CatchUp) Body() string {
	if c.N == 1 {
		return "Answering the message sent here while the gateway was down."
	}
	return fmt.Sprintf("Answering the %d messages sent here while the gateway was down, in order.", c.N)
}

// CatchUpTooMany: N messages (more than N when not Complete) arrived
// while the gateway was down, more than Max, so none was run.
type CatchUpTooMany struct {
	N, Max   int
	Complete bool
}

func (c CatchUpTooMany) Body() string {
	n := fmt.Sprint(c.N)
	if !c.Complete {
		n = "More than " + n
	}
	return fmt.Sprintf("%s messages arrived here while the gateway was down: too many to answer one by one (up to %d are), so none of them was run. Please send again what you still need.", n, c.Max)
}

// CatchUpFailed: the messages sent while the gateway was down could not
// be read, for Err.
type CatchUpFailed struct{ Err string }

func (c CatchUpFailed) Body() string {
	return "I could not read the messages sent here while the gateway was down (" + c.Err + "). Please send again what you still need."
}

// Refusal is the answer to someone the gateway does not serve, or whose
// answer to a prompt it cannot take.
type Refusal uint8

// The refusals.
const (
	RefuseAccess          Refusal = iota + 1 // not on the allow-list
	RefuseNotApprover                        // answers a prompt without being an approver
	RefusePromptGone                         // answers a prompt no longer pending
	RefuseAlreadyAnswered                    // answers a prompt someone just answered
	RefuseNotAsker                           // answers an agent's question without having started the turn or being an approver
)

func (r Refusal) Body() string {
	switch r {
	case RefuseAccess:
		return "Sorry, you don't have access to the agent here. Ask an operator to add you to the allow-list."
	case RefuseNotApprover:
		return "Sorry, only approvers can answer this prompt."
	case RefusePromptGone:
		return "This prompt is no longer waiting for an answer (it expired, was answered, or the gateway restarted)."
	case RefuseAlreadyAnswered:
		return "This prompt was already answered."
	case RefuseNotAsker:
		return "Sorry, only the person who started this turn, or an approver, can answer this question."
	}
	return "Sorry, this cannot be done here."
}

// AnswerRange asks for a number from 1 to Options where a prompt is
// answered by number.
type AnswerRange struct{ Options int }

func (a AnswerRange) Body() string {
	return fmt.Sprintf("Please answer with a number from 1 to %d.", a.Options)
}

// NoSuchAgent refuses a new thread's pick of an agent (Name) that cannot
// run there; Allowed are the names that can ("" when any agent of
// agents.list can, and Name is not one of them).
type NoSuchAgent struct {
	Name    string
	Allowed []string
}

func (n NoSuchAgent) Body() string {
	msg := "There is no agent called \"" + n.Name + "\" to pick here"
	if len(n.Allowed) > 0 {
		msg += "; pick one of: " + strings.Join(n.Allowed, ", ")
	}
	return msg + ". Your message was not sent to an agent."
}

// ByPolicy: the channel's permission policy answered a request about Tool
// without asking anyone.
type ByPolicy struct {
	Allowed bool
	Policy  string
	Tool    string
}

func (p ByPolicy) Body() string {
	verb := "Rejected"
	if p.Allowed {
		verb = "Allowed"
	}
	return fmt.Sprintf("%s by policy %s: %s", verb, p.Policy, p.Tool)
}

// StalePrompt replaces a prompt about Title that a restart left
// unanswered and the shutdown could not edit.
type StalePrompt struct{ Title string }

func (s StalePrompt) Body() string {
	return "Permission prompt expired: the gateway restarted before anyone answered (" + s.Title + ")."
}

// Chosen: By chose the option Name, of kind Kind (allow_once, …).
type Chosen struct{ Name, Kind, By string }

func (c Chosen) Line() string {
	mark := "✅"
	if strings.HasPrefix(c.Kind, "reject") {
		mark = "❌"
	}
	return mark + " " + c.Name + " — chosen by " + c.By
}

// Expired: nobody answered within After; the agent got the option Option
// ("": cancelled).
type Expired struct {
	After  time.Duration
	Option string
}

func (e Expired) Line() string {
	got := e.Option
	if got == "" {
		got = "cancelled"
	}
	return "⏱️ Expired after " + e.After.Round(time.Second).String() + " without an answer: " + got
}

// Cancelled: the prompt was cancelled; by whom (By, a stop), or why
// (Unknown: the answer named no option of the prompt; Unshown: the prompt
// could not be shown). With none of them it was just cancelled.
type Cancelled struct {
	By      string
	Unknown bool
	Unshown bool
}

func (c Cancelled) Line() string {
	switch {
	case c.Unknown:
		return "⏹️ Cancelled (unknown option)"
	case c.Unshown:
		return "⏹️ Cancelled: the prompt could not be shown in this thread"
	case c.By != "":
		return "⏹️ Cancelled (stopped by " + c.By + ")"
	}
	return "⏹️ Cancelled"
}

// Restarted: the gateway's shutdown left the prompt unanswered.
type Restarted struct{}

func (Restarted) Line() string {
	return "⏱️ Expired: the gateway restarted before anyone answered."
}

// FileNotSent stands in the thread for a file (Name, of Size bytes) that
// could not be put there: the chat takes no files (Limit 0), the file is
// larger than the chat's Limit, or the platform Refused it.
type FileNotSent struct {
	Name    string
	Size    int
	Limit   int
	Refused bool
}

func (f FileNotSent) Body() string {
	file := "The agent sent a file, " + f.Name + " (" + Bytes(f.Size) + ")"
	switch {
	case f.Refused:
		return file + ", but the chat platform refused it."
	case f.Limit <= 0:
		return file + ", but files cannot be shown in this chat."
	}
	return file + ", too large to show here: this chat takes files of up to " + Bytes(f.Limit) + "."
}

// FileNotPassed stands in the thread for a file of a person's message
// (Name, of Size bytes) that the agent did not get: on a cluster the
// message's files go from the machine that read them to the one running
// the agent in one message, which holds at most Limit bytes of them.
// Together: the file alone would fit, the message's files together did
// not.
type FileNotPassed struct {
	Name     string
	Size     int
	Limit    int
	Together bool
}

func (f FileNotPassed) Body() string {
	file := "Your file " + f.Name + " (" + Bytes(f.Size) + ") did not reach the agent: "
	if f.Together {
		return file + "the message's files are larger together than the " + Bytes(f.Limit) + " that can pass between this gateway's machines."
	}
	return file + "it is larger than the " + Bytes(f.Limit) + " that can pass between this gateway's machines."
}

// Bytes writes a size in bytes for people: "512 bytes", "1.5 KiB",
// "10 MiB" (binary units, one decimal where it is not whole).
func Bytes(n int) string {
	if n < 1024 {
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v := float64(n) / 1024
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[u]
}

// WorkspaceFailed: the thread's workspace (agents.list.NAME.workspace)
// could not be made or opened, for Err; the agent was not started.
type WorkspaceFailed struct{ Err string }

func (w WorkspaceFailed) Body() string {
	return "Couldn't prepare this thread's workspace, so the agent was not started: " + w.Err
}

// WorkspaceShown answers /workspace: the thread's working directory Path,
// in Mode (shared, dir, worktree), on Branch for a worktree. None: the
// thread has no workspace of its own yet (its agent has not started).
type WorkspaceShown struct {
	Mode, Path, Branch string
	None               bool
}

func (w WorkspaceShown) Body() string {
	switch {
	case w.None:
		return "This thread has no workspace of its own yet; it gets one when its agent starts."
	case w.Branch != "":
		return "Workspace: `" + w.Path + "` (a git worktree on branch `" + w.Branch + "`)"
	case w.Mode == "shared":
		return "Workspace: `" + w.Path + "` (shared by the agent's threads)"
	}
	return "Workspace: `" + w.Path + "`"
}

// DiffShown answers /diff: Stat is git diff --stat of the thread's
// worktree since its start (the full diff follows as a file); Empty: no
// change. Err says why there is no diff (not a worktree, git failed).
type DiffShown struct {
	Stat  string
	Empty bool
	Err   string
	// Shown and Total are the bytes of the diff file and of the whole
	// diff when the file was cut to the chat's upload limit; people see
	// the rest with git diff Start in the worktree at Path.
	Shown, Total int
	Path, Start  string
}

func (d DiffShown) Body() string {
	switch {
	case d.Err != "":
		return "No diff: " + d.Err
	case d.Empty:
		return "No changes in this thread's worktree since it was made."
	}
	s := "Changes in this thread's worktree:\n```\n" + strings.TrimRight(d.Stat, "\n") + "\n```"
	if d.Total > d.Shown {
		s += "\nThe diff file is cut to this chat's upload limit: " + Bytes(d.Total-d.Shown) + " of " + Bytes(d.Total) +
			" left out. To see it all, run " + Code("git diff "+d.Start) + " in " + Code(d.Path) + " (new files git does not track yet are not in it)."
	}
	return s
}

// Backfill is what a thread said before the bot was first mentioned in
// it, put before the first prompt as quoted context for the agent (not
// shown in the thread): Messages oldest first; Cut: older ones were left
// out to stay within the limits.
type Backfill struct {
	Messages []Said
	Cut      bool
}

// Said is one message of a Backfill.
type Said struct {
	Author string
	Bot    bool // written by a bot (this gateway's, or another)
	Self   bool // written by this gateway (with Bot)
	Time   time.Time
	Text   string
	Cut    bool // Text is the start of a longer text
}

// Body is the quoted context, or "" when there is none.
func (b Backfill) Body() string {
	if len(b.Messages) == 0 {
		return ""
	}
	var s strings.Builder
	s.WriteString("Earlier messages in this thread, for context (oldest first")
	if b.Cut {
		s.WriteString("; older ones left out")
	}
	s.WriteString("):\n")
	for _, m := range b.Messages {
		who := m.Author
		switch {
		case m.Self:
			who += " (this bot)"
		case m.Bot:
			who += " (bot)"
		}
		s.WriteString("> " + who)
		if !m.Time.IsZero() {
			s.WriteString(", " + m.Time.UTC().Format("2006-01-02 15:04 UTC"))
		}
		s.WriteString(":\n")
		text := strings.TrimRight(m.Text, "\n")
		if m.Cut {
			text += "…"
		}
		for _, line := range strings.Split(text, "\n") {
			s.WriteString("> " + line + "\n")
		}
	}
	return s.String()
}
