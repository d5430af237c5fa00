// Package channels defines the contract between the gateway and a chat platform:
// a small Adapter interface, one-method capability interfaces (Editor, Typer,
// Prompter, Uploader, History, …), platform limits as data, and the value
// types that cross the boundary.
//
// Which capabilities an adapter has is data too (Caps, caps.go): what its
// type implements and, for an adapter that knows them only at run time (a
// token's scopes, a cluster edge's announcement), what it reports
// (CapsReporter). The gateway finds a capability with As (or reads
// CapsOf) at the point of use, never with a bare type assertion, so that
// such an adapter is one type that implements every method, not one type
// per combination.
//
// Adapters live in sub-packages, one platform each. This package imports no
// platform and no other gateway package.
package channels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"time"
)

// ThreadRef names one conversation thread on one platform. It is comparable
// and usable as a map key.
type ThreadRef struct {
	// Platform is the adapter's name ("discord", "slack", "web", "replay").
	Platform string
	// Channel is the platform's channel (or workspace/channel pair) id.
	Channel string
	// Thread is the thread id inside Channel.
	Thread string
}

// String returns platform/channel/thread.
func (t ThreadRef) String() string { return t.Platform + "/" + t.Channel + "/" + t.Thread }

// LogValue groups the three ids in structured logs.
func (t ThreadRef) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("platform", t.Platform),
		slog.String("channel", t.Channel),
		slog.String("thread", t.Thread),
	)
}

// MessageID is a platform's id of a posted message.
type MessageID string

// Handle identifies a message an adapter posted, so it can be edited later.
type Handle struct {
	Thread ThreadRef
	ID     MessageID
}

// Known reports whether the handle carries a message id that can be edited.
func (h Handle) Known() bool { return h.ID != "" }

// Kind says what an outbound message carries. Adapters may style kinds
// differently (a thought as a collapsed card); they never drop one.
type Kind string

// The kinds of outbound messages; the same names `gateway replay` prints.
const (
	KindText       Kind = "text"
	KindTool       Kind = "tool"
	KindStatus     Kind = "status"
	KindNotice     Kind = "notice"
	KindPlan       Kind = "plan"
	KindThought    Kind = "thought"
	KindPermission Kind = "permission"
	// KindFile is a file put into the thread (Uploader.Upload); it is no
	// kind of Message.
	KindFile Kind = "file"
)

// Message is the content of one outbound message.
type Message struct {
	Kind Kind
	// Text is markdown as the agent wrote it; adapters convert it to the
	// platform's dialect. It already fits Limits.
	Text string
	// Key is the edit key of the message, if any (a tool call id, "plan").
	// It is informational for adapters; dispatch owns the handle bookkeeping.
	Key string
}

// Author is who sent an inbound message.
type Author struct {
	ID   string
	Name string
	// Bot reports that the author is a bot (including this gateway).
	// Adapters never deliver the gateway's own messages.
	Bot bool
	// Self marks the gateway's own message (with Bot): only History
	// returns these, for the context of a thread; they never run (see
	// Inbound.Meta for those that are not the agent's text).
	Self bool
	// Roles are the author's roles (Discord) or user groups (Slack) that
	// access rules may name; adapters fill what they know.
	Roles []string
}

// Inbound is a message a person wrote in a thread, a click on a choice, a
// stop or a command: Intent tells which.
type Inbound struct {
	Thread ThreadRef
	Author Author
	Text   string
	// Files are the message's attachments, in order; the gateway adds
	// them to the prompt (see package channels/attach).
	Files []File
	// Fetch, if set, returns Files with their content read, downloading
	// it (it blocks on I/O until ctx ends). The gateway calls it only
	// for a message it runs, on that thread's own goroutine, so that a
	// download neither serves people without access nor holds up other
	// events (a "stop").
	Fetch func(ctx context.Context) []File
	// ID is the platform's id of the inbound message, for de-duplication.
	// A reaction event has an id of its own, stable across redeliveries
	// (Slack's event_id; on Discord made of message, user, add or remove
	// and emoji), which is not a message's id.
	ID MessageID
	// Event is the platform's id of the delivery that carried it, the
	// same when the platform delivers it again (Slack's event_id; "" where
	// the adapter has none). Edges name an event that is not a message by
	// it (a message by its channel and ID, as one message may come in two
	// deliveries), so a redelivery that reached another edge is dropped.
	Event string
	// Choice is set when the inbound event is a click on a prompt option:
	// the prompt's handle and the option id.
	Choice *ChoiceAnswer
	// Stop is set when the inbound event is an explicit request to stop
	// the thread's running turn (a Stop button), whatever its Text: it
	// needs no stop word and works with stop words turned off.
	Stop bool
	// StopAll, with Stop, drops the messages queued behind the running
	// turn too (the web chat's Stop held down); a plain Stop ends the
	// running turn only.
	StopAll bool
	// Command is set when the message is one of the gateway's own
	// commands ("/stop"; see ParseCommand); Text keeps what was written.
	// At most one of Choice, Stop, Command, Closed, Form and Reaction
	// is set (see Intent).
	Command *Command
	// Suggest, set together with Command, asks for values of the
	// command's argument as people type it (Command.Args holds what they
	// typed so far); the gateway answers by calling it. It is not a
	// command to run.
	Suggest SuggestFunc
	// Form is set when the event answers a form the gateway showed
	// (Former).
	Form *FormAnswer
	// Reaction is set when a person added or removed a reaction on a
	// message of the thread.
	Reaction *Reaction
	// Closed is set when the person deleted the thread (the web chat's
	// Delete): its running turn is stopped, its agent process ended and
	// its binding forgotten, so the thread's session is never resumed.
	// Text and Files are ignored. With no Author (neither ID nor Name)
	// it is the platform's own word that the thread is gone (Discord's
	// thread deleted, Slack's thread root deleted), which needs no
	// access; with no Thread, every thread of Channel is gone (the
	// channel deleted).
	Closed bool
	// Archived is set when the thread was archived (Discord; Slack has
	// no archive of threads): its agent is stopped and its workspace
	// removed (a dirty worktree, and a worktree's branch with commits,
	// are kept), its binding kept, so a later message resumes its
	// session in a new workspace. The platform says not who archived
	// it: Author is empty, Text and Files are ignored. With no Thread,
	// every thread of Channel is archived (Slack's channel archived).
	Archived bool
	// Missed is set, instead of the messages, by a cluster edge's
	// catch-up when more messages were sent to the thread while its
	// platform connection was down than the catch-up publishes: the
	// thread is told, and Missed.Last becomes its last message handled.
	// Author, Text and Files are empty.
	Missed *Missed
	// Agent, if set, is the agent the person picked for a new thread,
	// by its name in agents.list. It applies to a thread not bound to an
	// agent yet; a bound thread keeps its agent. A name that is not
	// allowed there is refused with the names that are.
	Agent string
	// Space is the guild (Discord) or workspace (Slack) the thread is in,
	// "" where the platform has none.
	Space string
	// Time is when the message was sent, zero when the adapter does not
	// say (the quoted context of a thread shows it).
	Time time.Time
	// Meta marks, among the gateway's own messages History returns
	// (Author.Self), one that is not the agent's text: a tool line, a
	// status, a notice, a plan, a thought, a card, a prompt or a form.
	// The adapter tells it by a mark it put on the message when it
	// posted it (a message flag, the platform's message metadata),
	// never by its words; the agent's text, and a message posted before
	// the mark existed, carry none. The quoted context of a thread
	// (context.backfill) leaves such messages out.
	Meta bool
	// Reply, if set, answers the author privately (an ephemeral message,
	// as to a button click). It blocks on I/O. Where it is nil, the
	// gateway answers in the thread.
	Reply func(ctx context.Context, text string) error
}

// File is an attachment of an inbound message.
type File struct {
	Name        string
	ContentType string // "" when the platform did not say
	Size        int    // bytes, as the platform says
	URL         string // where people can open it
	// Text is the file's content when the adapter read it (a small text
	// file), Data an image's bytes; otherwise Skipped says why not, for
	// the agent.
	Text    string
	Data    []byte
	Skipped string
}

// ChoiceAnswer is a person's answer to a Choice.
type ChoiceAnswer struct {
	Prompt   Handle
	OptionID string
}

// Option is one answer offered by a Choice.
type Option struct {
	ID    string
	Label string
	// Style hints at the button colour: "primary", "danger" or "".
	Style string
}

// Choice is a question with buttons, such as a permission prompt.
type Choice struct {
	Text    string
	Options []Option
	// Attachment, if set, is a text file the prompt's message carries:
	// the whole of a Text that had to be shortened to fit (Text says so).
	// Dispatch sets it only for adapters whose Limits.MaxAttachmentBytes
	// admits it; other adapters never receive one.
	Attachment *Attachment
}

// Attachment is a text file sent with a message.
type Attachment struct {
	// Name is the file's name, such as "permission.txt".
	Name string
	// Text is the file's content, UTF-8.
	Text string
}

// Limits describes how much a platform accepts. It is data: dispatch and the
// splitter read it; nothing compares platform names.
type Limits struct {
	// MaxMessageChars is the longest message text in code points; 0 means
	// no limit.
	MaxMessageChars int
	// MaxLines is a soft limit of lines per message, for a platform that
	// collapses a message past some lines; 0 means none. None of the
	// adapters sets it: Discord, Slack and the web chat show a message
	// whole however many lines it has.
	MaxLines int
	// MinEditInterval is the shortest time between two edits of the same
	// message; 0 means dispatch's default (1 s).
	MinEditInterval time.Duration
	// MinPostInterval is the shortest time between two posts in one thread;
	// 0 means no pacing.
	MinPostInterval time.Duration
	// PostsPacedByChannel says that the platform limits posts per
	// channel, shared by the channel's threads (Slack: about one a
	// second), so that one process must pace them all: a cluster has one
	// edge perform a channel's operations, not one per thread.
	PostsPacedByChannel bool
	// TypingInterval is how often a typing indicator must be refreshed to
	// stay visible; 0 means it does not expire.
	TypingInterval time.Duration
	// TypingClearedByPost says that the platform hides the typing
	// indicator when the bot posts a message; while a turn runs, dispatch
	// then shows it again right after each post.
	TypingClearedByPost bool
	// MaxAttachmentBytes is the largest Choice.Attachment Prompter.Prompt
	// sends with a prompt; 0 means prompts carry no attachments.
	MaxAttachmentBytes int
	// MaxUploadBytes is the largest Upload.Data Uploader.Upload takes;
	// every Uploader reports one. It means nothing for an adapter that is
	// no Uploader (one whose platform may grant uploads at run time
	// reports it either way).
	MaxUploadBytes int
}

// Adapter is a connection to one chat platform.
type Adapter interface {
	// Run connects and delivers inbound messages to h until ctx is done.
	// It blocks; it returns nil when ctx ends and an error when the
	// connection cannot be kept.
	Run(ctx context.Context, h func(context.Context, Inbound)) error
	// Post sends m as a new message in t and returns its handle. It does
	// network I/O and blocks until the platform answered. It returns a
	// *RateLimitError when the platform asks to slow down; nothing was
	// posted then. An error the platform will answer the same way however
	// often it is tried is a *PermanentError (see IsPermanent); any other
	// error means the platform could not be reached, and the caller tries
	// again later.
	Post(ctx context.Context, t ThreadRef, m Message) (Handle, error)
	// Limits reports the platform's limits. It does no I/O.
	Limits() Limits
}

// Editor is implemented by adapters that can replace the text of a message
// they posted.
type Editor interface {
	// Edit replaces the content of the message h with m. It blocks on I/O.
	// Editing a message posted by Prompter.Prompt replaces its text and
	// removes its buttons (the prompt was answered).
	// It returns a *RateLimitError when asked to slow down and an error
	// wrapping ErrMessageGone when the message cannot be edited any more
	// (deleted, too old, archived); the caller then posts a new message.
	Edit(ctx context.Context, h Handle, m Message) error
}

// Typer is implemented by adapters that can show that the agent is working.
type Typer interface {
	// Typing shows the typing indicator in t once; it fades after
	// Limits.TypingInterval unless called again. It blocks on I/O.
	Typing(ctx context.Context, t ThreadRef) error
}

// TypingStopper is implemented by Typers whose indicator can be cleared
// before it fades (a thread status line), so it stops when the turn ends.
type TypingStopper interface {
	// StopTyping clears the typing indicator in t. It blocks on I/O.
	StopTyping(ctx context.Context, t ThreadRef) error
}

// Prompter is implemented by adapters that can show choices as buttons.
// Answers come back through Run's handler as Inbound.Choice.
type Prompter interface {
	// Prompt posts c in t with one button per option and returns the
	// message's handle. It blocks on I/O.
	Prompt(ctx context.Context, t ThreadRef, c Choice) (Handle, error)
}

// Uploader is implemented by adapters that can put a file into a thread
// (an attachment, a shared file, a download link).
type Uploader interface {
	// Upload posts f in t, with its caption, and returns the message's
	// handle where the platform names it (else a handle without an id).
	// It blocks on I/O. f.Data is at most Limits.MaxUploadBytes long and
	// f.Caption fits Limits.MaxMessageChars. Errors are those of
	// Adapter.Post: a *RateLimitError, a *PermanentError when the
	// platform refuses the file for good, anything else when it could
	// not be reached (nothing was posted; the caller tries again).
	Upload(ctx context.Context, t ThreadRef, f Upload) (Handle, error)
}

// Upload is a file the gateway puts into a thread (one the agent sent).
type Upload struct {
	// Name is the file's base name, such as "report.pdf". Adapters may
	// replace characters their platform refuses.
	Name string
	// ContentType is the file's media type; "" lets the adapter guess it
	// (see Upload.Type).
	ContentType string
	// Data is the file's content.
	Data []byte
	// Caption, if not "", is markdown shown with the file.
	Caption string
}

// Type returns the file's media type: ContentType where set, else the one
// its name's extension names, else one sniffed from its first bytes.
func (u Upload) Type() string {
	if u.ContentType != "" {
		return u.ContentType
	}
	if t := mime.TypeByExtension(path.Ext(u.Name)); t != "" {
		return t
	}
	return http.DetectContentType(u.Data)
}

// Titler is implemented by adapters whose threads have a name that can
// follow the agent's session title (a Discord thread's name).
type Titler interface {
	// SetTitle renames thread t. It blocks on I/O.
	SetTitle(ctx context.Context, t ThreadRef, title string) error
}

// Carder is implemented by adapters that can show a turn's tool calls as
// the rows of one message, a progress card, instead of one message each
// (Discord's Components V2 card). Dispatch needs to know: it groups the
// tool lines of a turn into cards and edits a card as a whole.
type Carder interface {
	// Cards reports whether tool calls are shown as cards (a setting of
	// the adapter); when false dispatch posts one message per tool.
	Cards() bool
	// Card shows rows, in order, as one card in t: a new message when h
	// is zero, else by replacing the rows of card h. Each row is a tool
	// call's line (Kind KindTool, Key its call id). It blocks on I/O and
	// returns the card's handle; its errors are those of Post (a new
	// card) and Edit (a card that can no longer be edited).
	Card(ctx context.Context, t ThreadRef, h Handle, rows []Message) (Handle, error)
}

// ToolDetail is what one tool call showed, for adapters that show it
// beside the tool's line. An update carries what it has: an empty field
// keeps what came before.
type ToolDetail struct {
	// Input is the tool's raw input (compact JSON, secrets redacted).
	Input string
	// Output is the text of the tool's content, else its raw output.
	Output string
	// Diffs are the files the tool changes, old and new text.
	Diffs []Diff
	// Locations are the files the tool touches ("path" or "path:line").
	Locations []string
}

// Diff is one file a tool changes.
type Diff struct {
	Path, Old, New string
}

// ToolDetailer is implemented by adapters that show a tool call's details
// beside its line (the web chat's tool lines open on click). ToolDetail is
// called on the agent's update path: it must not block or do I/O. Key is
// the tool call id, the Key of the tool line's Message.
type ToolDetailer interface {
	ToolDetail(t ThreadRef, key string, d ToolDetail)
}

// AgentShower is implemented by adapters that show which agent a thread
// uses (the web chat's thread list). ShowAgent is called when the
// thread's agent starts; it must not block or do I/O.
type AgentShower interface {
	ShowAgent(t ThreadRef, agent string)
}

// Checker is implemented by adapters that can tell whether they are
// connected to their platform (or listening, for a local chat), for the
// program's readiness check and metrics.
type Checker interface {
	// Check returns nil while the adapter can receive and send, else why
	// not. It does no I/O.
	Check() error
}

// History is implemented by adapters that can read what a thread received
// while the gateway was not listening, so that it can be answered at start.
type History interface {
	// MessagesAfter reads one page of the messages of thread t posted
	// after the message after, oldest first, at most about limit read.
	// Page.Messages holds those Run would have delivered, converted and
	// filtered the same way (system events left out; a message Run
	// delivered already may be among them: the caller answers it once),
	// and the gateway's own messages, their Author.Self set (the caller
	// that answers messages skips them), and Meta where they are not the
	// agent's text. A read from the start (after "") returns the
	// message that started the thread too, where the platform keeps it
	// outside the thread (Slack's parent, the channel message a Discord
	// thread was started from). It blocks on I/O. It
	// returns a *RateLimitError when the platform (or the adapter's own
	// pacing) asks the caller to wait; nothing was read then.
	MessagesAfter(ctx context.Context, t ThreadRef, after MessageID, limit int) (Page, error)
}

// NewSessions is implemented by adapters whose platform connection can
// start a new session that does not get what was sent while it had none
// (Discord's gateway after a fresh IDENTIFY, when it refused to resume),
// so that what people wrote in the gap is read from History and answered
// then, as at start.
type NewSessions interface {
	// Sessions receives a value each time the connection starts a new
	// session: its first, and each that follows a gap; never one that
	// resumed and so missed nothing. One value may stand for several
	// sessions. A value is sent before the adapter reports the session
	// connected (Checker) and before it delivers any event of it.
	Sessions() <-chan struct{}
}

// Missed is what a catch-up read and did not publish (Inbound.Missed).
type Missed struct {
	// N is how many messages people wrote; Max how many one thread may
	// have and still get them run.
	N, Max int
	// Complete is false when more were left unread.
	Complete bool
	// Last is the id of the last message read.
	Last MessageID
}

// Page is one read of a thread's history.
type Page struct {
	// Messages are what people wrote, oldest first.
	Messages []Inbound
	// Last is the id of the last message read (delivered or not), the
	// after of the next page; "" when nothing was read.
	Last MessageID
	// More reports that messages after Last were not read yet.
	More bool
}

// ErrMessageGone means a message can no longer be edited.
var ErrMessageGone = errors.New("message can no longer be edited")

// RateLimitError is returned by adapters when the platform asks the caller
// to wait. Dispatch handles it centrally; adapters never sleep.
type RateLimitError struct {
	// RetryAfter is how long to wait before the next call of this kind.
	RetryAfter time.Duration
	// Scope names what is limited ("post", "edit", a bucket id), for logs.
	Scope string
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited (%s): retry after %s", e.Scope, e.RetryAfter)
}

// PermanentError marks a failure that will not go away by trying again:
// the platform understood the request and refused it (an unknown channel,
// missing permissions, a message it cannot take). Dispatch gives such a
// message up at once; any other error of Post, Edit or Prompt (a refused
// connection, a timeout, a 5xx answer) counts as the platform being
// unreachable, and the message is tried again.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err as a *PermanentError; nil stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err will not succeed if tried again: it is
// or wraps a *PermanentError, or wraps ErrMessageGone.
func IsPermanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe) || errors.Is(err, ErrMessageGone)
}
