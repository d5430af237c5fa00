package jsstore

// The records of the buckets and streams, each a wire type of its own
// with explicit JSON names, never a store type marshalled as it is:
// rename Go fields freely, never a JSON name. The conventions are the
// store's (store/wire.go): camelCase keys, times as Unix milliseconds in
// keys ending in "Ms", and "v": store.WireVersion in every record. A
// record without "v" was written before records had wire types (version
// 0, the store's Go structs with their field names; wire_v0.go) and is
// read still, so that a cluster upgraded in place reads what it wrote
// before; one of a newer version is refused with an error.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// codec is how the values of a bucket are stored.
type codec[T any] struct {
	enc func(T) ([]byte, error)
	dec func([]byte) (T, error)
}

// wireCodec encodes with to, decodes a current record with from and one
// of version 0 with old.
func wireCodec[T, W, O any](to func(T) W, from func(W) T, old func(O) T) codec[T] {
	return codec[T]{
		enc: func(v T) ([]byte, error) { return store.MarshalWire(to(v)) },
		dec: func(b []byte) (T, error) {
			var zero T
			v, err := store.RecordVersion(b)
			if err != nil {
				return zero, err
			}
			if v == 0 {
				var o O
				if err := json.Unmarshal(b, &o); err != nil {
					return zero, err
				}
				return old(o), nil
			}
			var w W
			if err := json.Unmarshal(b, &w); err != nil {
				return zero, err
			}
			return from(w), nil
		},
	}
}

const wireV = store.WireVersion

func toMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

type bindingWire struct {
	V         int              `json:"v"`
	Thread    store.ThreadWire `json:"thread"`
	Agent     string           `json:"agent,omitempty"`
	SessionID string           `json:"sessionId,omitempty"`
	Cwd       string           `json:"cwd,omitempty"`
	Title     string           `json:"title,omitempty"`
	CreatedMS int64            `json:"createdMs,omitempty"`
	UpdatedMS int64            `json:"updatedMs,omitempty"`
}

var bindingCodec = wireCodec(
	func(b store.Binding) bindingWire {
		return bindingWire{V: wireV, Thread: store.WireThread(b.Thread), Agent: b.Agent, SessionID: b.SessionID, Cwd: b.Cwd,
			Title: b.Title, CreatedMS: toMS(b.Created), UpdatedMS: toMS(b.Updated)}
	},
	func(w bindingWire) store.Binding {
		return store.Binding{Thread: w.Thread.Ref(), Agent: w.Agent, SessionID: w.SessionID, Cwd: w.Cwd, Title: w.Title,
			Created: fromMS(w.CreatedMS), Updated: fromMS(w.UpdatedMS)}
	},
	bindingV0.binding,
)

type promptWire struct {
	V          int              `json:"v"`
	ID         string           `json:"id"`
	Thread     store.ThreadWire `json:"thread"`
	SessionID  string           `json:"sessionId,omitempty"`
	RequestID  string           `json:"requestId,omitempty"`
	ToolCallID string           `json:"toolCallId,omitempty"`
	Title      string           `json:"title,omitempty"`
	Kind       string           `json:"kind,omitempty"`
	Options    []optionWire     `json:"options,omitempty"`
	MessageID  string           `json:"messageId,omitempty"`
	Status     string           `json:"status"`
	Chosen     string           `json:"chosen,omitempty"`
	ChosenBy   string           `json:"chosenBy,omitempty"`
	CreatedMS  int64            `json:"createdMs,omitempty"`
	ExpiresMS  int64            `json:"expiresMs,omitempty"`
	ResolvedMS int64            `json:"resolvedMs,omitempty"`
}

type optionWire struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Kind string `json:"kind,omitempty"`
}

func convert[E, T any](s []E, f func(E) T) []T {
	if len(s) == 0 {
		return nil
	}
	out := make([]T, len(s))
	for i, e := range s {
		out[i] = f(e)
	}
	return out
}

var promptCodec = wireCodec(
	func(p store.Prompt) promptWire {
		return promptWire{V: wireV, ID: p.ID, Thread: store.WireThread(p.Thread), SessionID: p.SessionID, RequestID: p.RequestID,
			ToolCallID: p.ToolCallID, Title: p.Title, Kind: p.Kind,
			Options:   convert(p.Options, func(o store.PromptOption) optionWire { return optionWire(o) }),
			MessageID: p.MessageID, Status: string(p.Status), Chosen: p.Chosen, ChosenBy: p.ChosenBy,
			CreatedMS: toMS(p.CreatedAt), ExpiresMS: toMS(p.ExpiresAt), ResolvedMS: toMS(p.ResolvedAt)}
	},
	func(w promptWire) store.Prompt {
		return store.Prompt{ID: w.ID, Thread: w.Thread.Ref(), SessionID: w.SessionID, RequestID: w.RequestID,
			ToolCallID: w.ToolCallID, Title: w.Title, Kind: w.Kind,
			Options:   convert(w.Options, func(o optionWire) store.PromptOption { return store.PromptOption(o) }),
			MessageID: w.MessageID, Status: store.PromptStatus(w.Status), Chosen: w.Chosen, ChosenBy: w.ChosenBy,
			CreatedAt: fromMS(w.CreatedMS), ExpiresAt: fromMS(w.ExpiresMS), ResolvedAt: fromMS(w.ResolvedMS)}
	},
	promptV0.prompt,
)

type holdWire struct {
	V         int              `json:"v"`
	Thread    store.ThreadWire `json:"thread"`
	Budget    string           `json:"budget"`
	ReachedMS int64            `json:"reachedMs,omitempty"`
}

var holdCodec = wireCodec(
	func(h store.BudgetHold) holdWire {
		return holdWire{V: wireV, Thread: store.WireThread(h.Thread), Budget: h.Budget, ReachedMS: toMS(h.Reached)}
	},
	func(w holdWire) store.BudgetHold {
		return store.BudgetHold{Thread: w.Thread.Ref(), Budget: w.Budget, Reached: fromMS(w.ReachedMS)}
	},
	holdV0.hold,
)

// choicesWire holds a thread's chosen options by name. Version 0 was the
// map itself: it is told apart by its "v", a string there if anything.
type choicesWire struct {
	V       int               `json:"v"`
	Choices map[string]string `json:"choices"`
}

var choicesCodec = codec[map[string]string]{
	enc: func(m map[string]string) ([]byte, error) { return store.MarshalWire(choicesWire{V: wireV, Choices: m}) },
	dec: func(b []byte) (map[string]string, error) {
		var p struct {
			V json.RawMessage `json:"v"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if len(p.V) == 0 || p.V[0] == '"' { // version 0: an option may be called "v"
			var m map[string]string
			err := json.Unmarshal(b, &m)
			return m, err
		}
		if _, err := store.RecordVersion(b); err != nil {
			return nil, err
		}
		var w choicesWire
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, err
		}
		return w.Choices, nil
	},
}

type runningWire struct {
	V         int              `json:"v"`
	Thread    store.ThreadWire `json:"thread"`
	SessionID string           `json:"sessionId,omitempty"`
	StartedMS int64            `json:"startedMs,omitempty"`
	// Prompt is store.MarshalTurnPrompt's, absent for none.
	Prompt   json.RawMessage `json:"prompt,omitempty"`
	Attempts int             `json:"attempts,omitempty"`
}

var runningCodec = codec[store.RunningTurn]{
	enc: func(r store.RunningTurn) ([]byte, error) {
		w := runningWire{V: wireV, Thread: store.WireThread(r.Thread), SessionID: r.SessionID, StartedMS: toMS(r.Started), Attempts: r.Attempts}
		if !r.Prompt.IsZero() {
			p, err := store.MarshalTurnPrompt(r.Prompt)
			if err != nil {
				return nil, err
			}
			w.Prompt = p
		}
		return store.MarshalWire(w)
	},
	dec: func(b []byte) (store.RunningTurn, error) {
		v, err := store.RecordVersion(b)
		if err != nil {
			return store.RunningTurn{}, err
		}
		if v == 0 {
			var o runningV0
			if err := json.Unmarshal(b, &o); err != nil {
				return store.RunningTurn{}, err
			}
			return o.running()
		}
		var w runningWire
		if err := json.Unmarshal(b, &w); err != nil {
			return store.RunningTurn{}, err
		}
		r := store.RunningTurn{Thread: w.Thread.Ref(), SessionID: w.SessionID, Started: fromMS(w.StartedMS), Attempts: w.Attempts}
		if len(w.Prompt) > 0 && string(w.Prompt) != "null" {
			if r.Prompt, err = store.UnmarshalTurnPrompt(w.Prompt); err != nil {
				return store.RunningTurn{}, fmt.Errorf("prompt: %w", err)
			}
		}
		return r, nil
	},
}

// seenMark is a thread's last message read.
type seenMark struct {
	MessageID channels.MessageID
	At        time.Time
	Thread    channels.ThreadRef
}

type seenWire struct {
	V         int              `json:"v"`
	Thread    store.ThreadWire `json:"thread"`
	MessageID string           `json:"messageId"`
	AtMS      int64            `json:"atMs,omitempty"`
}

var seenCodec = wireCodec(
	func(s seenMark) seenWire {
		return seenWire{V: wireV, Thread: store.WireThread(s.Thread), MessageID: string(s.MessageID), AtMS: toMS(s.At)}
	},
	func(w seenWire) seenMark {
		return seenMark{Thread: w.Thread.Ref(), MessageID: channels.MessageID(w.MessageID), At: fromMS(w.AtMS)}
	},
	seenV0.mark,
)

// sessionClaim is the value of a session's key: the thread that attached
// it, when; or Gone, the session of a deleted thread.
type sessionClaim struct {
	Thread channels.ThreadRef
	At     time.Time
	Gone   bool
}

type claimWire struct {
	V      int              `json:"v"`
	Thread store.ThreadWire `json:"thread"`
	AtMS   int64            `json:"atMs,omitempty"`
	Gone   bool             `json:"gone,omitempty"`
}

var claimCodec = wireCodec(
	func(c sessionClaim) claimWire {
		return claimWire{V: wireV, Thread: store.WireThread(c.Thread), AtMS: toMS(c.At), Gone: c.Gone}
	},
	func(w claimWire) sessionClaim {
		return sessionClaim{Thread: w.Thread.Ref(), At: fromMS(w.AtMS), Gone: w.Gone}
	},
	claimV0.claim,
)

// openCodec is the store's: both backends keep open messages alike.
var openCodec = codec[[]store.OpenMessage]{enc: store.EncodeOpenMessages, dec: store.DecodeOpenMessages}

// turnWire is a turn record of the turns stream. A measure the agent did
// not report is absent (Used, Size, Cost nil), as SQLite keeps NULL.
type turnWire struct {
	V           int              `json:"v"`
	Thread      store.ThreadWire `json:"thread"`
	SessionID   string           `json:"sessionId"`
	Seq         int              `json:"seq"`
	StopReason  string           `json:"stopReason,omitempty"`
	Error       string           `json:"error,omitempty"`
	StartedMS   int64            `json:"startedMs,omitempty"`
	EndedMS     int64            `json:"endedMs,omitempty"`
	Used        *int64           `json:"used,omitempty"`
	Size        *int64           `json:"size,omitempty"`
	Cost        *float64         `json:"cost,omitempty"`
	Currency    string           `json:"currency,omitempty"`
	PromptChars int              `json:"promptChars,omitempty"`
	ReplyChars  int              `json:"replyChars,omitempty"`
}

func known[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

func value[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}

var turnCodec = wireCodec(
	func(t store.Turn) turnWire {
		return turnWire{V: wireV, Thread: store.WireThread(t.Thread), SessionID: t.SessionID, Seq: t.Seq,
			StopReason: t.StopReason, Error: t.Error, StartedMS: toMS(t.Started), EndedMS: toMS(t.Ended),
			Used: known(t.Used, t.UsedKnown), Size: known(t.Size, t.SizeKnown), Cost: known(t.Cost, t.CostKnown),
			Currency: t.Currency, PromptChars: t.PromptChars, ReplyChars: t.ReplyChars}
	},
	func(w turnWire) store.Turn {
		t := store.Turn{Thread: w.Thread.Ref(), SessionID: w.SessionID, Seq: w.Seq, StopReason: w.StopReason, Error: w.Error,
			Started: fromMS(w.StartedMS), Ended: fromMS(w.EndedMS), Currency: w.Currency, PromptChars: w.PromptChars, ReplyChars: w.ReplyChars}
		t.Used, t.UsedKnown = value(w.Used)
		t.Size, t.SizeKnown = value(w.Size)
		t.Cost, t.CostKnown = value(w.Cost)
		return t
	},
	turnV0.turn,
)

// savedWire is a record of the entries stream: the entries one
// SaveEntries wrote, together, so that a save is all or nothing (a record
// in parts is read only whole). Each is store.MarshalEntry's. A record
// without "entries" is one entry on its own, as SaveEntries wrote them
// before.
type savedWire struct {
	V       int               `json:"v"`
	Entries []json.RawMessage `json:"entries"`
}

func marshalSaved(es []store.Entry) ([]byte, error) {
	w := savedWire{V: wireV, Entries: make([]json.RawMessage, len(es))}
	for i, e := range es {
		b, err := store.MarshalEntry(e)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", e.Seq, err)
		}
		w.Entries[i] = b
	}
	return store.MarshalWire(w)
}

func unmarshalSaved(b []byte) ([]store.Entry, error) {
	var p struct {
		Entries json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	if p.Entries == nil {
		e, err := store.UnmarshalEntry(b)
		if err != nil {
			return nil, err
		}
		return []store.Entry{e}, nil
	}
	if _, err := store.RecordVersion(b); err != nil {
		return nil, err
	}
	var w savedWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	es := make([]store.Entry, len(w.Entries))
	for i, r := range w.Entries {
		e, err := store.UnmarshalEntry(r)
		if err != nil {
			return nil, fmt.Errorf("entry %d of %d: %w", i+1, len(w.Entries), err)
		}
		es[i] = e
	}
	return es, nil
}
