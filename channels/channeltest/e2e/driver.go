// Package e2e is the end-to-end suite every chat platform runs: the real
// adapter against its platform's fake server, the real session router,
// the demo agent as a subprocess and real SQLite. The suite names no
// platform; each adapter's tests supply a Driver, a person's hands and
// eyes on that adapter's fake, and run the suite with Run. Cases that
// only one platform has stay beside its adapter, and may use the same
// harness (Start).
package e2e

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// Person is one of the people the suite's cases have write, click and
// react. Which of them may prompt or approve is each case's access rule.
type Person int

const (
	Ann Person = iota // the one with access, in every case
	Bob               // someone else
)

// Name is the person's display name on every platform's fake.
func (p Person) Name() string {
	if p == Ann {
		return "Ann"
	}
	return "Bob"
}

// Message is one of the gateway's messages as a person sees it.
type Message struct {
	ID channels.MessageID
	// Text is the message's text as a person reads it (the platform's
	// entities decoded).
	Text string
	// Chars is the message's length as the platform counts it against
	// its limit (its own form of the text, entities encoded).
	Chars int
	// Controls is set when the message has buttons or a menu: a prompt
	// or a form not yet answered.
	Controls bool
	// Files are the texts of the files attached to the message.
	Files []string
}

// Wiring is what the harness gives a new adapter: the platform's
// adapter takes the parts it needs, as the program wires it.
type Wiring struct {
	// Admit asks the router whether an inbound event may open a thread.
	Admit func(ctx context.Context, in channels.Inbound) bool
	// Known reports whether the gateway holds a binding for th.
	Known func(ctx context.Context, th channels.ThreadRef) bool
	// Logger is the gateway's logger (nil: none).
	Logger *slog.Logger
}

// Driver is one platform's part of the suite: its fake, an adapter
// against it, and a person's hands and eyes there. The methods fail t
// rather than return errors; a Driver serves one test.
type Driver interface {
	// Platform is the adapter's platform name, as the router knows it.
	Platform() string
	// Adapter returns a new adapter against the fake, wired with w and
	// ready for Run (each gateway the test starts gets its own).
	Adapter(t *testing.T, w Wiring) channels.Adapter
	// Connected waits until the adapter's Run can receive events.
	Connected(t *testing.T, ctx context.Context)
	// Access returns rule with the fake's space added (its users and
	// approvers are user ids).
	Access(rule session.AccessRule) session.AccessRule
	// UserID is p's user id on the fake.
	UserID(p Person) string
	// Mention has who mention the app with text in the fake's channel,
	// and returns the thread that the mention opens.
	Mention(t *testing.T, ctx context.Context, who Person, text string) channels.ThreadRef
	// Say has who write text in th (no mention) and returns the message.
	Say(t *testing.T, ctx context.Context, who Person, th channels.ThreadRef, text string) channels.MessageID
	// SayWhileDown has who write text in th while no adapter runs: the
	// platform keeps the message (in the thread's history) and delivers
	// it to nobody.
	SayWhileDown(t *testing.T, who Person, th channels.ThreadRef, text string)
	// Messages returns the gateway's messages in th, oldest first.
	Messages(th channels.ThreadRef) []Message
	// Changed returns a channel closed at the fake's next change.
	Changed() <-chan struct{}
	// Click has who click the button of message m (a prompt in th) whose
	// option id ends with suffix ("/allow_once"), and returns how who
	// reads an answer to the click (a refusal).
	Click(t *testing.T, ctx context.Context, who Person, th channels.ThreadRef, m Message, suffix string) Reply
	// Edits is how many times the adapter edited the gateway's message
	// id in th.
	Edits(th channels.ThreadRef, id channels.MessageID) int
	// React has who add emoji (the gateway's form, channels.ReactStop) to
	// message msg in th (msg may be the message that opened th).
	React(t *testing.T, ctx context.Context, who Person, th channels.ThreadRef, msg channels.MessageID, emoji string)
	// Reactions returns the app's own reactions on msg in th, in the
	// gateway's form (the fake's state, not a log of calls).
	Reactions(th channels.ThreadRef, msg channels.MessageID) []string
	// HistoryReads is how many times the adapter read th's history from
	// the platform.
	HistoryReads(th channels.ThreadRef) int
	// DeleteThread deletes th as a person on the platform does (who, the
	// platform may not say).
	DeleteThread(t *testing.T, ctx context.Context, th channels.ThreadRef)
	// DeleteChannel deletes channel, with its threads, as a person on the
	// platform does.
	DeleteChannel(t *testing.T, ctx context.Context, channel string)

	// What the gateway reads of a thread it joins (context.backfill):

	// Started has who start a thread in the fake's channel with text, not
	// mentioning the app, dated at, before the gateway runs; it returns
	// the thread and the time the platform shows for the message (the
	// fake may not date messages as asked).
	Started(t *testing.T, who Person, text string, at time.Time) (channels.ThreadRef, time.Time)
	// Said has who (nil: another app's bot) write text in th, dated at,
	// before the gateway runs, and returns the time the platform shows.
	Said(t *testing.T, who *Person, th channels.ThreadRef, text string, at time.Time) time.Time
	// Dated dates the gateway's message id in th at, where the fake can,
	// and returns the time the platform shows for it.
	Dated(th channels.ThreadRef, id channels.MessageID, at time.Time) time.Time
	// MentionIn has who mention the app with text in th, and returns the
	// time the platform shows for the message.
	MentionIn(t *testing.T, ctx context.Context, who Person, th channels.ThreadRef, text string) time.Time
	// Refusals is how many times the gateway told who in th that they
	// have no access.
	Refusals(who Person, th channels.ThreadRef) int
	// Names are the names the gateway quotes for its own messages and for
	// the other app's bot of Said.
	Names() (self, otherBot string)

	// Steering the session:

	// Command has who give the gateway command line ("model demo-smart",
	// "status") in th, in form, and returns how who reads the answer.
	Command(t *testing.T, ctx context.Context, who Person, th channels.ThreadRef, form CommandForm, line string) Reply
	// Fill has who answer the agent's question m in th, field by field,
	// as the platform has a person answer a form (selects, a modal), and
	// submit it. It fails t when the form lacks a field or a choice does
	// not offer exactly the field's Choices.
	Fill(t *testing.T, ctx context.Context, who Person, th channels.ThreadRef, m Message, fields []Field)
}

// CommandForm is one of a platform's two ways to give a gateway command.
type CommandForm int

const (
	// Native is the platform's own: an application command on Discord,
	// "!model value" on Slack.
	Native CommandForm = iota
	// Typed is a message: "/model value" on Discord, "@app model value"
	// on Slack.
	Typed
)

// Reply waits for the gateway's answer, to whoever gave a command or
// clicked, that contains sub; it returns the answer and whether it was
// private (only they see it; on a platform that cannot answer a message
// privately it is in the thread). It fails the test when no such answer
// comes.
type Reply func(sub string) (text string, private bool)

// Field is a person's answer to one field of a form: the field's label
// and the value typed or picked; a choice's Choices are the values the
// form must offer.
type Field struct {
	Label, Value string
	Choices      []string
}
