package store

import (
	"encoding/json"
	"time"
)

// TypeQuestion is the entry type of an agent's question (elicitation).
const TypeQuestion EntryType = "question"

// QuestionEntry is a question the agent asked people (elicitation), and
// its answer.
type QuestionEntry struct {
	RequestID  string
	ToolCallID string
	// Message is what the agent asked; Mode "form" or "url" (with URL).
	Message string
	Mode    string
	URL     string
	// Fields are the names of the form's fields, in order.
	Fields []string
	// Action is accept, decline or cancel; "" until answered. Content is
	// an accepted form's values as JSON (nil otherwise).
	Action  string
	Content json.RawMessage
	// Asked is when the question came (the entry's Time); Answered when
	// it was settled, zero until then.
	Asked    time.Time
	Answered time.Time
}

func (QuestionEntry) entryType() EntryType { return TypeQuestion }

type questionJSON struct {
	RequestID  string          `json:"requestId"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Message    string          `json:"message,omitempty"`
	Mode       string          `json:"mode,omitempty"`
	URL        string          `json:"url,omitempty"`
	Fields     []string        `json:"fields,omitempty"`
	Action     string          `json:"action,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
	AskedMS    int64           `json:"askedMs,omitempty"`
	AnsweredMS int64           `json:"answeredMs,omitempty"`
}

func encodeQuestion(b QuestionEntry) questionJSON {
	return questionJSON{
		RequestID: b.RequestID, ToolCallID: b.ToolCallID, Message: b.Message, Mode: b.Mode, URL: b.URL,
		Fields: cloneSlice(b.Fields), Action: b.Action, Content: rawJSON(b.Content),
		AskedMS: toMS(b.Asked), AnsweredMS: toMS(b.Answered),
	}
}

func decodeQuestion(data []byte) (Body, error) {
	var w questionJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	return QuestionEntry{
		RequestID: w.RequestID, ToolCallID: w.ToolCallID, Message: w.Message, Mode: w.Mode, URL: w.URL,
		Fields: w.Fields, Action: w.Action, Content: w.Content,
		Asked: fromMS(w.AskedMS), Answered: fromMS(w.AnsweredMS),
	}, nil
}

// questionKey keys a question's request id among the permission
// requests' (which are never this long with a leading "?").
func questionKey(id string) string { return "?" + id }

// Question records a question the agent asked. A zero q.Asked means now.
func (t *Transcript) Question(q QuestionEntry) {
	q.Fields = cloneSlice(q.Fields)
	q.Asked, q.Answered = normTime(q.Asked), normTime(q.Answered)
	if q.Asked.IsZero() {
		q.Asked = now()
	}
	seq := t.add(q, q.Asked)
	if q.RequestID != "" {
		t.perms[questionKey(q.RequestID)] = seq
	}
}

// QuestionAnswered records how question requestID was settled: action,
// and an accepted form's content, at time at. The first answer wins: it
// reports false when the question is unknown or was settled already.
func (t *Transcript) QuestionAnswered(requestID, action string, content json.RawMessage, at time.Time) bool {
	seq, ok := t.perms[questionKey(requestID)]
	if !ok {
		return false
	}
	q := t.entries[seq].Body.(QuestionEntry)
	if !q.Answered.IsZero() {
		return false
	}
	at = normTime(at)
	if at.IsZero() {
		at = now()
	}
	q.Action, q.Content, q.Answered = action, append(json.RawMessage(nil), content...), at
	t.set(seq, q, at)
	return true
}
