package jsstore

// Version 0 of the records, as the code before wire types wrote them:
// the store's Go structs marshalled as they were, with their field names
// as keys and times in RFC 3339 (the session claims had lowercase keys,
// their thread the Go names). These types are frozen: they read what is
// stored, and nothing writes them.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

type threadV0 struct {
	Platform string `json:"Platform"`
	Channel  string `json:"Channel"`
	Thread   string `json:"Thread"`
}

func (o threadV0) ref() channels.ThreadRef { return channels.ThreadRef(o) }

type bindingV0 struct {
	Thread    threadV0  `json:"Thread"`
	Agent     string    `json:"Agent"`
	SessionID string    `json:"SessionID"`
	Cwd       string    `json:"Cwd"`
	Title     string    `json:"Title"`
	Created   time.Time `json:"Created"`
	Updated   time.Time `json:"Updated"`
}

func (o bindingV0) binding() store.Binding {
	return store.Binding{Thread: o.Thread.ref(), Agent: o.Agent, SessionID: o.SessionID, Cwd: o.Cwd, Title: o.Title,
		Created: store.NormTime(o.Created), Updated: store.NormTime(o.Updated)}
}

type optionV0 struct {
	ID   string `json:"ID"`
	Name string `json:"Name"`
	Kind string `json:"Kind"`
}

type promptV0 struct {
	ID         string     `json:"ID"`
	Thread     threadV0   `json:"Thread"`
	SessionID  string     `json:"SessionID"`
	RequestID  string     `json:"RequestID"`
	ToolCallID string     `json:"ToolCallID"`
	Title      string     `json:"Title"`
	Kind       string     `json:"Kind"`
	Options    []optionV0 `json:"Options"`
	MessageID  string     `json:"MessageID"`
	Status     string     `json:"Status"`
	Chosen     string     `json:"Chosen"`
	ChosenBy   string     `json:"ChosenBy"`
	CreatedAt  time.Time  `json:"CreatedAt"`
	ExpiresAt  time.Time  `json:"ExpiresAt"`
	ResolvedAt time.Time  `json:"ResolvedAt"`
}

func (o promptV0) prompt() store.Prompt {
	return store.Prompt{ID: o.ID, Thread: o.Thread.ref(), SessionID: o.SessionID, RequestID: o.RequestID,
		ToolCallID: o.ToolCallID, Title: o.Title, Kind: o.Kind,
		Options:   convert(o.Options, func(o optionV0) store.PromptOption { return store.PromptOption(o) }),
		MessageID: o.MessageID, Status: store.PromptStatus(o.Status), Chosen: o.Chosen, ChosenBy: o.ChosenBy,
		CreatedAt: store.NormTime(o.CreatedAt), ExpiresAt: store.NormTime(o.ExpiresAt), ResolvedAt: store.NormTime(o.ResolvedAt)}
}

type holdV0 struct {
	Thread  threadV0  `json:"Thread"`
	Budget  string    `json:"Budget"`
	Reached time.Time `json:"Reached"`
}

func (o holdV0) hold() store.BudgetHold {
	return store.BudgetHold{Thread: o.Thread.ref(), Budget: o.Budget, Reached: store.NormTime(o.Reached)}
}

// runningV0 is a running mark; its prompt was store.TurnPrompt's JSON of
// the time, which store.UnmarshalTurnPrompt reads.
type runningV0 struct {
	Thread    threadV0        `json:"Thread"`
	SessionID string          `json:"SessionID"`
	Started   time.Time       `json:"Started"`
	Prompt    json.RawMessage `json:"Prompt"`
	Attempts  int             `json:"Attempts"`
}

func (o runningV0) running() (store.RunningTurn, error) {
	r := store.RunningTurn{Thread: o.Thread.ref(), SessionID: o.SessionID, Started: store.NormTime(o.Started), Attempts: o.Attempts}
	if len(o.Prompt) > 0 && string(o.Prompt) != "null" {
		p, err := store.UnmarshalTurnPrompt(o.Prompt)
		if err != nil {
			return store.RunningTurn{}, fmt.Errorf("prompt: %w", err)
		}
		r.Prompt = p
	}
	return r, nil
}

type seenV0 struct {
	MessageID string    `json:"MessageID"`
	At        time.Time `json:"At"`
	Thread    threadV0  `json:"Thread"`
}

func (o seenV0) mark() seenMark {
	return seenMark{MessageID: channels.MessageID(o.MessageID), At: store.NormTime(o.At), Thread: o.Thread.ref()}
}

type claimV0 struct {
	Thread threadV0  `json:"thread"`
	At     time.Time `json:"at"`
	Gone   bool      `json:"gone"`
}

func (o claimV0) claim() sessionClaim {
	return sessionClaim{Thread: o.Thread.ref(), At: o.At, Gone: o.Gone}
}

type turnV0 struct {
	Thread      threadV0  `json:"Thread"`
	SessionID   string    `json:"SessionID"`
	Seq         int       `json:"Seq"`
	StopReason  string    `json:"StopReason"`
	Error       string    `json:"Error"`
	Started     time.Time `json:"Started"`
	Ended       time.Time `json:"Ended"`
	Used        int64     `json:"Used"`
	Size        int64     `json:"Size"`
	UsedKnown   bool      `json:"UsedKnown"`
	SizeKnown   bool      `json:"SizeKnown"`
	Cost        float64   `json:"Cost"`
	Currency    string    `json:"Currency"`
	CostKnown   bool      `json:"CostKnown"`
	PromptChars int       `json:"PromptChars"`
	ReplyChars  int       `json:"ReplyChars"`
}

func (o turnV0) turn() store.Turn {
	return store.Turn{Thread: o.Thread.ref(), SessionID: o.SessionID, Seq: o.Seq, StopReason: o.StopReason, Error: o.Error,
		Started: store.NormTime(o.Started), Ended: store.NormTime(o.Ended), Used: o.Used, Size: o.Size,
		UsedKnown: o.UsedKnown, SizeKnown: o.SizeKnown, Cost: o.Cost, Currency: o.Currency, CostKnown: o.CostKnown,
		PromptChars: o.PromptChars, ReplyChars: o.ReplyChars}
}
