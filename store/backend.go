package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Backend is what the gateway needs from its durable state: bindings,
// permission prompts, turns and spend, budget holds, choices, running
// turns, seen messages and transcripts. [Store] (SQLite, for `gateway run`)
// implements it, and so does the cluster's JetStream store; the contract
// both keep is the suite in store/storetest.
type Backend interface {
	Binding(ctx context.Context, t channels.ThreadRef) (Binding, bool, error)
	PutBinding(ctx context.Context, b Binding) error
	// DeleteBinding forgets a deleted thread: its binding and what is
	// kept per thread besides (choices, budget hold, last message seen);
	// its session's turns and transcript stay, and its session is gone
	// for good (SessionGone, AttachSession refuses it).
	DeleteBinding(ctx context.Context, t channels.ThreadRef) error
	Bindings(ctx context.Context) ([]Binding, error)
	// ChannelBindings lists the bindings of one channel's threads, by
	// thread, without reading the other channels'.
	ChannelBindings(ctx context.Context, platform, channel string) ([]Binding, error)
	// AttachSession binds b.Thread to b.SessionID (/attach), as one
	// claim: ErrSessionGone when the session was a deleted thread's,
	// ErrSessionTaken when another thread is bound to it or claimed it;
	// of two at once exactly one wins. Else it writes b as PutBinding.
	AttachSession(ctx context.Context, b Binding) error
	// SessionGone reports whether session id was a deleted thread's.
	SessionGone(ctx context.Context, id string) (bool, error)

	AddPrompt(ctx context.Context, p Prompt) error
	SetPromptMessage(ctx context.Context, id, messageID string) error
	// ResolvePrompt settles a pending prompt; it reports true to exactly
	// one caller, however many try at once.
	ResolvePrompt(ctx context.Context, id string, status PromptStatus, chosen, by string, at time.Time) (bool, error)
	Prompt(ctx context.Context, id string) (Prompt, bool, error)
	PendingPrompts(ctx context.Context) ([]Prompt, error)
	ExpireAll(ctx context.Context, at time.Time) ([]Prompt, error)

	AddTurn(ctx context.Context, t Turn) error
	Turns(ctx context.Context, sessionID string) ([]Turn, error)
	UsageTotals(ctx context.Context, sessionID string) (Usage, error)
	ChannelSpend(ctx context.Context, platform, channel string, since time.Time) (Spend, error)
	ThreadSpend(ctx context.Context, t channels.ThreadRef) (Spend, error)
	SessionCost(ctx context.Context, id string) (float64, bool, error)

	PutBudgetHold(ctx context.Context, h BudgetHold) error
	BudgetHoldOf(ctx context.Context, t channels.ThreadRef) (BudgetHold, bool, error)
	ClearBudgetHold(ctx context.Context, t channels.ThreadRef) error

	SetChoice(ctx context.Context, t channels.ThreadRef, option, value string) error
	Choices(ctx context.Context, t channels.ThreadRef) (map[string]string, error)
	ClearChoices(ctx context.Context, t channels.ThreadRef) error
	DropChoice(ctx context.Context, t channels.ThreadRef, option string) error

	MarkTurnRunning(ctx context.Context, r RunningTurn) error
	ClearTurnRunning(ctx context.Context, t channels.ThreadRef, started time.Time) error
	RunningTurns(ctx context.Context) ([]RunningTurn, error)

	// SetOpenMessages replaces the thread's open messages (none: forgets
	// them); OpenMessages reads them.
	SetOpenMessages(ctx context.Context, t channels.ThreadRef, ms []OpenMessage) error
	OpenMessages(ctx context.Context, t channels.ThreadRef) ([]OpenMessage, error)

	MarkSeen(ctx context.Context, t channels.ThreadRef, id channels.MessageID, at time.Time) error
	// LastSeen returns the id of the last message marked seen in t, if any.
	LastSeen(ctx context.Context, t channels.ThreadRef) (channels.MessageID, bool, error)
	SeenSince(ctx context.Context, since time.Time) ([]Seen, error)

	SaveEntries(ctx context.Context, sessionID string, es []Entry) error
	Entries(ctx context.Context, sessionID string) ([]Entry, error)
	LoadTranscript(ctx context.Context, sessionID string) (*Transcript, error)
}

var _ Backend = (*Store)(nil)

// The helpers below let another Backend keep the same data the same way.

// NormTime is t as the store keeps it: UTC, to the millisecond (zero stays
// zero).
func NormTime(t time.Time) time.Time { return normTime(t) }

// entryJSON is an entry on its own, as another backend stores it (see
// wire.go). Its keys are snake_case, as they were released before records
// had versions: a version 0 entry is this without "v".
type entryJSON struct {
	V       int             `json:"v"`
	Seq     int             `json:"seq"`
	Type    EntryType       `json:"type"`
	Time    int64           `json:"created_ms"`
	Updated int64           `json:"updated_ms"`
	Data    json.RawMessage `json:"data"`
}

// MarshalEntry encodes e with the same body encoding as the SQLite store.
func MarshalEntry(e Entry) ([]byte, error) {
	typ, data, err := encodeBody(e.Body)
	if err != nil {
		return nil, err
	}
	return MarshalWire(entryJSON{V: WireVersion, Seq: e.Seq, Type: typ, Time: toMS(e.Time), Updated: toMS(e.Updated), Data: data})
}

// UnmarshalEntry decodes what MarshalEntry encoded, or an entry of
// version 0.
func UnmarshalEntry(b []byte) (Entry, error) {
	if _, err := RecordVersion(b); err != nil {
		return Entry{}, err
	}
	var w entryJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return Entry{}, err
	}
	body, err := decodeBody(w.Type, w.Data)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Seq: w.Seq, Time: fromMS(w.Time), Updated: fromMS(w.Updated), Body: body}, nil
}

// RestoreTranscript rebuilds a transcript from its entries in seq order.
func RestoreTranscript(es []Entry) (*Transcript, error) { return restoreTranscript(es) }
