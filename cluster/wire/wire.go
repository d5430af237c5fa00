// Package wire is the JSON form of the channel contract's values that
// cross between an edge (which holds a platform adapter) and a worker
// (which runs the thread): inbound events, outbound operations and their
// results, and an edge's announcement of its capabilities and limits.
//
// The contract's plain data types (channels.Message, Handle, Choice,
// Upload, Form, Reaction, Limits, CommandInfo, …) travel as they are,
// encoded by encoding/json with their Go field names. An Inbound carries
// functions (Fetch, Suggest, Reply) that cannot travel; its wire form says
// which were set, and the worker calls them back on the edge that took the
// event (Callback).
//
// Everything decoded here is outside input: the decoders refuse what the
// gateway could not act on, with an error, and never panic.
package wire

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Inbound is channels.Inbound on the wire.
type Inbound struct {
	Thread   channels.ThreadRef     `json:"thread"`
	Author   channels.Author        `json:"author"`
	Text     string                 `json:"text,omitempty"`
	Files    []channels.File        `json:"files,omitempty"`
	ID       channels.MessageID     `json:"id"`
	Choice   *channels.ChoiceAnswer `json:"choice,omitempty"`
	Stop     bool                   `json:"stop,omitempty"`
	StopAll  bool                   `json:"stopAll,omitempty"`
	Command  *channels.Command      `json:"command,omitempty"`
	Form     *channels.FormAnswer   `json:"form,omitempty"`
	Reaction *channels.Reaction     `json:"reaction,omitempty"`
	Closed   bool                   `json:"closed,omitempty"`
	Missed   *channels.Missed       `json:"missed,omitempty"`
	Agent    string                 `json:"agent,omitempty"`
	Space    string                 `json:"space,omitempty"`
	Time     time.Time              `json:"time,omitzero"`
	Meta     bool                   `json:"meta,omitempty"`
	// TakeOver is set, alone, by a worker that found prompts pending in
	// a thread whose worker went away (no lease, a mark older than the
	// lease TTL): the worker that gets the event takes the thread over
	// (asks the prompts again) and hands the event itself to no thread.
	// Author, Text, Files and every other intent are empty.
	TakeOver bool `json:"takeover,omitempty"`
	// Edge is the edge that took the event, which answers its callbacks;
	// Fetch, Suggest and Reply say which of the event's functions were
	// set there.
	Edge    string `json:"edge,omitempty"`
	Fetch   bool   `json:"fetch,omitempty"`
	Suggest bool   `json:"suggest,omitempty"`
	Reply   bool   `json:"reply,omitempty"`
}

// FromInbound returns in's wire form, taken by edge.
func FromInbound(in channels.Inbound, edge string) Inbound {
	return Inbound{
		Thread: in.Thread, Author: in.Author, Text: in.Text, Files: in.Files, ID: in.ID,
		Choice: in.Choice, Stop: in.Stop, StopAll: in.StopAll, Command: in.Command, Form: in.Form,
		Reaction: in.Reaction, Closed: in.Closed, Missed: in.Missed, Agent: in.Agent, Space: in.Space, Time: in.Time,
		Meta: in.Meta, Edge: edge, Fetch: in.Fetch != nil, Suggest: in.Suggest != nil, Reply: in.Reply != nil,
	}
}

// Inbound returns the event as the gateway takes it, without its
// functions (the worker sets them to calls back to the edge).
func (w Inbound) Inbound() channels.Inbound {
	return channels.Inbound{
		Thread: w.Thread, Author: w.Author, Text: w.Text, Files: w.Files, ID: w.ID,
		Choice: w.Choice, Stop: w.Stop, StopAll: w.StopAll, Command: w.Command, Form: w.Form,
		Reaction: w.Reaction, Closed: w.Closed, Missed: w.Missed, Agent: w.Agent, Space: w.Space, Time: w.Time,
		Meta: w.Meta,
	}
}

// DecodeInbound reads an inbound event. It needs a thread (all three ids)
// and an id; an event with a callback needs its edge.
func DecodeInbound(b []byte) (Inbound, error) {
	var w Inbound
	if err := json.Unmarshal(b, &w); err != nil {
		return Inbound{}, fmt.Errorf("wire: inbound event: %w", err)
	}
	if err := checkThread(w.Thread); err != nil {
		return Inbound{}, fmt.Errorf("wire: inbound event: %w", err)
	}
	if w.ID == "" {
		return Inbound{}, errors.New("wire: inbound event without an id")
	}
	if (w.Fetch || w.Suggest || w.Reply) && w.Edge == "" {
		return Inbound{}, errors.New("wire: inbound event with a callback but no edge")
	}
	if w.Suggest && w.Command == nil {
		return Inbound{}, errors.New("wire: inbound event asks for suggestions without a command")
	}
	if w.TakeOver && (w.Author.ID != "" || w.Author.Name != "" || len(w.Author.Roles) > 0 || w.Text != "" || len(w.Files) > 0 || w.Inbound().Intent() != channels.IntentMessage || w.Fetch || w.Suggest || w.Reply) {
		return Inbound{}, errors.New("wire: a take-over event with a message, an intent or a callback")
	}
	return w, nil
}

// IsTakeOver reports whether b is a take-over event (TakeOverEvent) and
// nothing else: no author, text, file, intent or callback. Workers publish
// these unsigned; every other inbound event must carry an edge's
// signature.
func IsTakeOver(b []byte) bool {
	w, err := DecodeInbound(b)
	return err == nil && w.TakeOver
}

// TakeOverEvent is the event that asks the worker it reaches to take
// thread over, for the mark accepted at started and taken over attempts
// times, found by a scan in round (the scan's time cut to the lease TTL):
// its id is the thread, the mark's time, the attempts and the round, so
// that workers scanning in the same round store it once, and a take-over
// that came to nothing (its worker died before claiming the thread, or
// failed to) is published anew by the next round's scan instead of being
// dropped as a duplicate for the whole duplicate window.
func TakeOverEvent(thread channels.ThreadRef, started time.Time, attempts int, round time.Time) Inbound {
	return Inbound{Thread: thread, ID: channels.MessageID(fmt.Sprintf("takeover:%s:%d:%d:%d", thread.String(), started.UnixMilli(), attempts, round.UnixMilli())), TakeOver: true}
}

func checkThread(t channels.ThreadRef) error {
	if t.Platform == "" || t.Channel == "" || t.Thread == "" {
		return fmt.Errorf("thread %q is missing an id", t.String())
	}
	return nil
}

// The operations an edge performs, by name (Op.Op). Each but OpCaps is the
// method of the same name of channels.Adapter or one of its capabilities.
const (
	OpPost          = "post"
	OpEdit          = "edit"
	OpTyping        = "typing"
	OpStopTyping    = "stop_typing"
	OpPrompt        = "prompt"
	OpUpload        = "upload"
	OpSetTitle      = "set_title"
	OpCard          = "card"
	OpReact         = "react"
	OpUnreact       = "unreact"
	OpForm          = "form"
	OpSetCommands   = "set_commands"
	OpMessagesAfter = "messages_after"
	OpTurnEnded     = "turn_ended"
	OpToolDetail    = "tool_detail"
	OpShowAgent     = "show_agent"
	OpShowSession   = "show_session"
	// The callbacks of an inbound event, on the edge that took it.
	OpFetch   = "fetch"
	OpSuggest = "suggest"
	OpReply   = "reply"
)

// Op is one outbound operation a worker asks an edge to perform.
type Op struct {
	// Key is the operation's idempotency key: the edge performs an
	// operation once per key and answers a repeat with the first result.
	Key string `json:"key"`
	Op  string `json:"op"`

	Thread  channels.ThreadRef     `json:"thread,omitzero"`
	Handle  channels.Handle        `json:"handle,omitzero"`
	Message *channels.Message      `json:"message,omitempty"`
	Choice  *channels.Choice       `json:"choice,omitempty"`
	Upload  *channels.Upload       `json:"upload,omitempty"`
	Form    *channels.Form         `json:"form,omitempty"`
	Rows    []channels.Message     `json:"rows,omitempty"`
	Text    string                 `json:"text,omitempty"` // a title, an emoji, an agent's name, a reply
	Cmds    []channels.CommandInfo `json:"cmds,omitempty"`
	After   channels.MessageID     `json:"after,omitempty"`
	Limit   int                    `json:"limit,omitempty"`
	Detail  *channels.ToolDetail   `json:"detail,omitempty"`
	Session *channels.SessionInfo  `json:"session,omitempty"`
	Options []channels.Option      `json:"options,omitempty"`
	// Event is the inbound event a callback belongs to.
	Event channels.MessageID `json:"event,omitempty"`
}

// DecodeOp reads an operation: it needs a key and a known name.
func DecodeOp(b []byte) (Op, error) {
	var o Op
	if err := json.Unmarshal(b, &o); err != nil {
		return Op{}, fmt.Errorf("wire: operation: %w", err)
	}
	if o.Key == "" {
		return Op{}, errors.New("wire: operation without an idempotency key")
	}
	switch o.Op {
	case OpPost, OpEdit, OpTyping, OpStopTyping, OpPrompt, OpUpload, OpSetTitle, OpCard,
		OpReact, OpUnreact, OpForm, OpSetCommands, OpMessagesAfter, OpTurnEnded,
		OpToolDetail, OpShowAgent, OpShowSession, OpFetch, OpSuggest, OpReply:
	default:
		return Op{}, fmt.Errorf("wire: unknown operation %q", o.Op)
	}
	return o, nil
}

// The kinds of an edge's error (Error.Kind): each comes back to the
// worker as the error a local adapter returns.
const (
	ErrRateLimit = "rate_limit" // *channels.RateLimitError
	ErrPermanent = "permanent"  // *channels.PermanentError
	ErrGone      = "gone"       // wraps channels.ErrMessageGone
	ErrOther     = "other"      // anything else: the platform could not be reached
	// ErrBusy says another edge is performing the same operation now;
	// the worker asks again (same key) after a while.
	ErrBusy = "busy"
	// ErrUnsupported says the edge's adapter lacks the operation's
	// capability.
	ErrUnsupported = "unsupported"
)

// Error is an operation's failure.
type Error struct {
	Kind       string        `json:"kind"`
	Message    string        `json:"message"`
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	Scope      string        `json:"scope,omitempty"`
}

// Result is an operation's outcome.
type Result struct {
	Handle channels.Handle `json:"handle,omitzero"`
	Page   *Page           `json:"page,omitempty"`
	Files  []channels.File `json:"files,omitempty"` // a fetch's
	Err    *Error          `json:"err,omitempty"`
	// Edge is the edge that answered (the worker paces a thread that
	// moved between edges by it).
	Edge string `json:"edge,omitempty"`
}

// Page is channels.Page on the wire.
type Page struct {
	Messages []Inbound          `json:"messages,omitempty"`
	Last     channels.MessageID `json:"last,omitempty"`
	More     bool               `json:"more,omitempty"`
}

// DecodeResult reads an edge's answer.
func DecodeResult(b []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, fmt.Errorf("wire: result: %w", err)
	}
	if r.Err != nil && r.Err.Kind == "" {
		return Result{}, errors.New("wire: result with an error of no kind")
	}
	if r.Page != nil {
		for i, m := range r.Page.Messages {
			if err := checkThread(m.Thread); err != nil || m.ID == "" {
				return Result{}, fmt.Errorf("wire: result: page message %d without a thread or an id", i)
			}
		}
	}
	return r, nil
}

// ErrorOf returns err's wire form, nil for nil.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	var rl *channels.RateLimitError
	switch {
	case errors.As(err, &rl):
		return &Error{Kind: ErrRateLimit, Message: err.Error(), RetryAfter: rl.RetryAfter, Scope: rl.Scope}
	case errors.Is(err, channels.ErrMessageGone):
		return &Error{Kind: ErrGone, Message: err.Error()}
	case channels.IsPermanent(err):
		return &Error{Kind: ErrPermanent, Message: err.Error()}
	}
	return &Error{Kind: ErrOther, Message: err.Error()}
}

// Err returns the error a local adapter would have returned: a
// *channels.RateLimitError, a *channels.PermanentError, an error wrapping
// channels.ErrMessageGone, or a plain error (try again). nil for nil.
func (e *Error) Err() error {
	if e == nil {
		return nil
	}
	switch e.Kind {
	case ErrRateLimit:
		return &channels.RateLimitError{RetryAfter: e.RetryAfter, Scope: e.Scope}
	case ErrGone:
		return fmt.Errorf("edge: %s: %w", e.Message, channels.ErrMessageGone)
	case ErrPermanent, ErrUnsupported:
		return channels.Permanent(fmt.Errorf("edge: %s", e.Message))
	}
	return fmt.Errorf("edge: %s", e.Message)
}

// Caps is what an edge announces for its platform: the adapter's
// capabilities and its limits.
type Caps struct {
	Platform string `json:"platform"`
	// Names are the adapter's capabilities as channels.Caps.Names spells
	// them ("edit", "stop_typing", "turn_end", ...): the spelling edges
	// have announced since the first cluster release, so that what the
	// edges' bucket holds and what edges of another release announce
	// reads the same. A name this build does not know is ignored.
	Names []string `json:"caps"`
	// Cards says that tool calls are shown as cards, as "cards" in Names
	// does: edges wrote it here before the name existed, and workers of
	// that release read it here.
	Cards  bool            `json:"cards,omitempty"`
	Limits channels.Limits `json:"limits"`
}

// FromCaps returns the announcement of platform's adapter, whose
// capabilities are c (channels.CapsOf) and limits l.
func FromCaps(platform string, c channels.Caps, l channels.Limits) Caps {
	return Caps{Platform: platform, Names: c.Names(), Cards: c.Cards, Limits: l}
}

// Caps returns the capabilities c announces.
func (c Caps) Caps() channels.Caps {
	caps := channels.CapsNamed(c.Names)
	caps.Cards = caps.Cards || c.Cards
	return caps
}

// DecodeCaps reads an edge's announcement.
func DecodeCaps(b []byte) (Caps, error) {
	var c Caps
	if err := json.Unmarshal(b, &c); err != nil {
		return Caps{}, fmt.Errorf("wire: capabilities: %w", err)
	}
	if c.Platform == "" {
		return Caps{}, errors.New("wire: capabilities without a platform")
	}
	return c, nil
}

// The subjects and buckets of the seam. Names (cluster, platform, edge)
// are tokens of letters, digits, "-" and "_" (cluster.Config.Check and
// the callers see to it).

// OpsSubject is where a platform's operations go: every edge of the
// platform listens in the queue group OpsQueue, so one performs each.
func OpsSubject(cluster, platform string) string { return cluster + ".out." + platform }

// EdgeSubject is where one edge answers the callbacks of the events it
// took (an Inbound's Fetch, Suggest and Reply), and the operations of
// the threads a worker sends to it (see LiveBucket).
func EdgeSubject(cluster, edge string) string { return cluster + ".edge." + edge }

// OpsQueue is the queue group of a platform's edges.
const OpsQueue = "edges"

// OpsBucket is the key-value bucket of operation results by idempotency
// key; EdgesBucket holds each platform's Caps (key: the platform).
func OpsBucket(cluster string) string   { return cluster + "_ops" }
func EdgesBucket(cluster string) string { return cluster + "_edges" }

// NewKey returns a random idempotency key (an operation's, or an event's
// id when it has none of its own).
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// LiveBucket holds one key per edge and platform (LiveKey) while the edge
// serves: a worker sends a thread's operations to one live edge of its
// platform (EdgeSubject), so that one edge's rate-limit state counts all
// of them. The edge renews its key within Live.TTL and deletes it when
// it stops; a key not renewed in time is a dead edge's.
func LiveBucket(cluster string) string { return cluster + "_live" }

// LiveKey is edge's key in LiveBucket for platform.
func LiveKey(platform, edge string) string { return platform + "." + edge }

// Live is an edge's entry in LiveBucket.
type Live struct {
	Platform string `json:"platform"`
	Edge     string `json:"edge"`
	// TTL is how long the entry holds without being renewed.
	TTL time.Duration `json:"ttl"`
	// Since is when the edge started serving (a worker that started
	// later learns from it that the edge's threads just moved).
	Since time.Time `json:"since,omitzero"`
}

// maxLiveTTL bounds the TTL an entry may claim.
const maxLiveTTL = time.Hour

// DecodeLive reads an entry of LiveBucket: it needs a platform and an
// edge (letters, digits, - and _) and a TTL of at most an hour.
func DecodeLive(b []byte) (Live, error) {
	var l Live
	if err := json.Unmarshal(b, &l); err != nil {
		return Live{}, fmt.Errorf("wire: live edge: %w", err)
	}
	if !token(l.Platform) || !token(l.Edge) {
		return Live{}, fmt.Errorf("wire: live edge %q of platform %q: want letters, digits, - and _", l.Edge, l.Platform)
	}
	if l.TTL <= 0 || l.TTL > maxLiveTTL {
		return Live{}, fmt.Errorf("wire: live edge %q: ttl %v out of (0, %v]", l.Edge, l.TTL, maxLiveTTL)
	}
	return l, nil
}

// token reports whether s is a name of the seam (letters, digits, - and
// _), as cluster.ValidName.
func token(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
