package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Elicitation (ACP elicitation/create, unstable in SDK v0.13.5). The tap
// reads these requests with its own types rather than the SDK's: the
// SDK's request type drops the sessionId that says which thread is asked.

// Questioner is implemented by a Handler that can ask people an agent's
// question. A Handler without it gets every question answered "cancel".
type Questioner interface {
	// Question shows q and blocks until it is answered. It runs on its
	// own goroutine; ctx ends when the agent process exits. A stop, an
	// expiry or ctx ending answers Cancel.
	Question(ctx context.Context, q Question) Answer
}

// Question is an elicitation/create from the agent.
type Question struct {
	SessionID string
	// Subagent is the child session asking, when SessionID is one of a
	// subagent the session announced; "" when the session asks itself.
	Subagent string
	// ToolCallID is the tool call the question belongs to, if any.
	ToolCallID string
	// Message says what the agent wants to know.
	Message string
	// Mode is "form" (Fields are to be filled in) or "url" (the person
	// opens URL and comes back).
	Mode string
	// URL and ElicitationID are set in url mode.
	URL, ElicitationID string
	// Completed, in url mode, is closed when the agent says with
	// elicitation/complete that the person finished at the URL while
	// the question waits: the Questioner may then answer Accept itself.
	// Nil in form mode.
	Completed <-chan struct{}
	// Title and Description of the form, if the schema gives them.
	Title, Description string
	// Fields of a form, in the schema's order when the agent's JSON keeps
	// one (the order of the properties object), else by name.
	Fields []Field
}

// FieldKind is the kind of input a Field takes.
type FieldKind string

// The kinds of Field.
const (
	FieldText    FieldKind = "text"    // a string
	FieldNumber  FieldKind = "number"  // a number
	FieldInteger FieldKind = "integer" // a whole number
	FieldBool    FieldKind = "boolean" // yes or no
	FieldChoice  FieldKind = "choice"  // one of Choices
	FieldMulti   FieldKind = "multi"   // any of Choices
)

// Field is one input of a form question.
type Field struct {
	// Name is the key of the answer in Answer.Content.
	Name               string
	Title, Description string
	Kind               FieldKind
	Required           bool
	// Choices of a choice or multi field.
	Choices []Choice
	// Format of a text field (email, uri, date, date-time), "" if none.
	Format string
	// Default is the default value as JSON text ("" if none).
	Default string
	// Min and Max bound a number (value), a text (length) or a multi
	// field (count of choices); nil when not bounded.
	Min, Max *float64
}

// Choice is one value of a choice or multi field.
type Choice struct {
	Value, Title string
}

// The actions of an Answer.
const (
	Accept  = "accept"
	Decline = "decline"
	Cancel  = "cancel"
)

// Answer is the person's answer to a Question.
type Answer struct {
	// Action is Accept, Decline or Cancel.
	Action string
	// Content holds an accepted form's values by Field.Name: a string
	// (text, choice), a float64 (number, integer), a bool, or a []string
	// (multi).
	Content map[string]any
}

// maxFields bounds the fields read from one question.
const maxFields = 64

// wireQuestion is elicitation/create's params as they come.
type wireQuestion struct {
	SessionID     string          `json:"sessionId"`
	ToolCallID    string          `json:"toolCallId"`
	Mode          string          `json:"mode"`
	Message       string          `json:"message"`
	URL           string          `json:"url"`
	ElicitationID string          `json:"elicitationId"`
	Schema        json.RawMessage `json:"requestedSchema"`
}

type wireSchema struct {
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Type        string          `json:"type"`
	Properties  json.RawMessage `json:"properties"`
	Required    []string        `json:"required"`
}

type wireProp struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []wireConst     `json:"oneOf"`
	AnyOf       []wireConst     `json:"anyOf"`
	Format      string          `json:"format"`
	Default     json.RawMessage `json:"default"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinLength   *float64        `json:"minLength"`
	MaxLength   *float64        `json:"maxLength"`
	MinItems    *float64        `json:"minItems"`
	MaxItems    *float64        `json:"maxItems"`
	Items       *wireProp       `json:"items"`
}

type wireConst struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// ParseQuestion decodes the params of an elicitation/create. It returns an
// error saying what is wrong when the params cannot be shown: no session,
// an unknown mode, a url question without a url, a form whose schema is not
// an object of properties, or a property of a type a form cannot take.
func ParseQuestion(params []byte) (Question, error) {
	var w wireQuestion
	if err := json.Unmarshal(params, &w); err != nil {
		return Question{}, fmt.Errorf("elicitation params: %w", err)
	}
	q := Question{SessionID: w.SessionID, ToolCallID: w.ToolCallID, Message: w.Message, Mode: w.Mode}
	if q.SessionID == "" {
		return Question{}, errors.New("elicitation params: no sessionId (only session questions are supported)")
	}
	switch w.Mode {
	case "url":
		if w.URL == "" {
			return Question{}, errors.New("elicitation params: url mode without a url")
		}
		q.URL, q.ElicitationID = w.URL, w.ElicitationID
		return q, nil
	case "form":
	default:
		return Question{}, fmt.Errorf("elicitation params: mode %q is neither form nor url", w.Mode)
	}
	var s wireSchema
	if len(w.Schema) == 0 {
		return Question{}, errors.New("elicitation params: a form without requestedSchema")
	}
	if err := json.Unmarshal(w.Schema, &s); err != nil {
		return Question{}, fmt.Errorf("elicitation requestedSchema: %w", err)
	}
	if s.Type != "" && s.Type != "object" {
		return Question{}, fmt.Errorf("elicitation requestedSchema: type %q, want object", s.Type)
	}
	q.Title, q.Description = s.Title, s.Description
	names, props, err := orderedProps(s.Properties)
	if err != nil {
		return Question{}, err
	}
	if len(names) > maxFields {
		return Question{}, fmt.Errorf("elicitation requestedSchema: %d fields, at most %d", len(names), maxFields)
	}
	for i, name := range names {
		f, err := field(name, props[i])
		if err != nil {
			return Question{}, err
		}
		f.Required = slices.Contains(s.Required, name)
		q.Fields = append(q.Fields, f)
	}
	return q, nil
}

// orderedProps decodes the properties object keeping the order of its
// keys, which is the order the agent means the fields to be shown in.
func orderedProps(raw json.RawMessage) ([]string, []wireProp, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("elicitation requestedSchema: properties is not an object")
	}
	var names []string
	var props []wireProp
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation requestedSchema properties: %w", err)
		}
		name, _ := tok.(string)
		var p wireProp
		if err := dec.Decode(&p); err != nil {
			return nil, nil, fmt.Errorf("elicitation requestedSchema property %q: %w", name, err)
		}
		if slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("elicitation requestedSchema: property %q twice", name)
		}
		names = append(names, name)
		props = append(props, p)
		if len(names) > maxFields {
			break
		}
	}
	return names, props, nil
}

func field(name string, p wireProp) (Field, error) {
	f := Field{Name: name, Title: p.Title, Description: p.Description, Format: p.Format}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		f.Default = string(p.Default)
	}
	choices := func(enum, names []string, consts []wireConst) []Choice {
		var out []Choice
		for i, v := range enum {
			c := Choice{Value: v, Title: v}
			if i < len(names) && names[i] != "" {
				c.Title = names[i]
			}
			out = append(out, c)
		}
		for _, c := range consts {
			t := c.Title
			if t == "" {
				t = c.Const
			}
			out = append(out, Choice{Value: c.Const, Title: t})
		}
		return out
	}
	switch p.Type {
	case "string":
		if cs := choices(p.Enum, p.EnumNames, p.OneOf); len(cs) > 0 {
			f.Kind, f.Choices = FieldChoice, cs
			return f, nil
		}
		f.Kind, f.Min, f.Max = FieldText, p.MinLength, p.MaxLength
	case "number", "integer":
		f.Kind, f.Min, f.Max = FieldKind(p.Type), p.Minimum, p.Maximum
	case "boolean":
		f.Kind = FieldBool
	case "array":
		if p.Items == nil {
			return Field{}, fmt.Errorf("elicitation field %q: an array without items", name)
		}
		cs := choices(p.Items.Enum, p.Items.EnumNames, append(p.Items.AnyOf, p.Items.OneOf...))
		if len(cs) == 0 {
			return Field{}, fmt.Errorf("elicitation field %q: an array whose items offer no choices", name)
		}
		f.Kind, f.Choices, f.Min, f.Max = FieldMulti, cs, p.MinItems, p.MaxItems
	default:
		return Field{}, fmt.Errorf("elicitation field %q: type %q, want string, number, integer, boolean or array", name, p.Type)
	}
	return f, nil
}

// answerResult encodes an Answer as elicitation/create's result. An
// unknown action is sent as cancel; content goes only with accept.
func answerResult(a Answer) []byte {
	type result struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content,omitempty"`
	}
	r := result{Action: a.Action}
	switch a.Action {
	case Accept:
		r.Content = a.Content
	case Decline:
	default:
		r.Action = Cancel
	}
	b, err := json.Marshal(r)
	if err != nil {
		// Content the person typed is strings, numbers and bools; a value
		// json cannot encode is a bug of the caller.
		b, _ = json.Marshal(result{Action: Cancel})
	}
	return b
}

// elicit answers one elicitation/create request (raw JSON-RPC id and
// params, copies) on its own goroutine, owned by the process: its context
// ends when the process exits.
func (p *Process) elicit(id, params []byte) {
	// Parsed and registered here, on the reader goroutine, so that an
	// elicitation/complete on the next line finds the question waiting.
	q, err := ParseQuestion(params)
	if err != nil {
		p.log.Warn("cannot show an agent's question; answered invalid params", "err", err)
		msg, _ := json.Marshal(err.Error())
		p.tap.respond(id, nil, []byte(`{"code":-32602,"message":`+string(msg)+`}`))
		return
	}
	registered := false
	if q.Mode == "url" && q.ElicitationID != "" {
		done := make(chan struct{})
		q.Completed = done
		p.mu.Lock()
		if _, dup := p.waiting[q.ElicitationID]; !dup {
			p.waiting[q.ElicitationID] = done
			registered = true
		}
		p.mu.Unlock()
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if registered {
			defer func() {
				p.mu.Lock()
				delete(p.waiting, q.ElicitationID)
				p.mu.Unlock()
			}()
		}
		a := Answer{Action: Cancel}
		s, child := p.handlerOf(q.SessionID)
		q.Subagent = child
		switch qr, ok := s.questioner(); {
		case s == nil:
			p.log.Warn("question for an unknown session; answering cancel", "session", q.SessionID)
		case !ok:
			p.log.Warn("the session cannot ask questions; answering cancel", "session", q.SessionID)
		default:
			ctx, cancel := p.callContext(context.Background())
			a = qr.Question(ctx, q)
			cancel()
		}
		p.tap.respond(id, answerResult(a), nil)
	}()
}

// completed closes the Completed channel of the url question waiting
// with elicitationID, if any (elicitation/complete from the agent).
func (p *Process) completed(elicitationID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done, ok := p.waiting[elicitationID]; ok {
		close(done)
		delete(p.waiting, elicitationID)
		return
	}
	p.log.Debug("elicitation/complete for no waiting question", "elicitation", elicitationID)
}

func (s *Session) questioner() (Questioner, bool) {
	if s == nil {
		return nil, false
	}
	q, ok := s.h.(Questioner)
	return q, ok
}
