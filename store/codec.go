package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpgw/gateway/projector"
)

// The JSON stored in entries.data, one shape per entry type. These structs
// are the file format: rename Go fields freely, never the JSON names.

type messageJSON struct {
	Role   string `json:"role"`
	Text   string `json:"text"`
	Length int    `json:"length,omitempty"` // of the whole text, when text was cut
}

type thoughtJSON struct {
	Text   string `json:"text"`
	Length int    `json:"length,omitempty"`
}

type toolContentJSON struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Path       string `json:"path,omitempty"`
	OldText    string `json:"oldText,omitempty"`
	NewText    string `json:"newText,omitempty"`
	TerminalID string `json:"terminalId,omitempty"`
}

// toolContentWire is c as stored: without its picture, which the
// transcript does not keep (the thread got it as an upload).
func toolContentWire(c projector.ToolContent) toolContentJSON {
	return toolContentJSON{Type: c.Type, Text: c.Text, Path: c.Path, OldText: c.OldText, NewText: c.NewText, TerminalID: c.TerminalID}
}

func toolContentOf(c toolContentJSON) projector.ToolContent {
	return projector.ToolContent{Type: c.Type, Text: c.Text, Path: c.Path, OldText: c.OldText, NewText: c.NewText, TerminalID: c.TerminalID}
}

type locationJSON struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

type toolCallJSON struct {
	ID        string            `json:"id"`
	Title     string            `json:"title,omitempty"`
	Kind      string            `json:"kind,omitempty"`
	Status    string            `json:"status,omitempty"`
	Input     json.RawMessage   `json:"input,omitempty"`
	Output    json.RawMessage   `json:"output,omitempty"`
	Content   []toolContentJSON `json:"content,omitempty"`
	Locations []locationJSON    `json:"locations,omitempty"`
}

type permissionJSON struct {
	RequestID  string       `json:"requestId"`
	ToolCallID string       `json:"toolCallId,omitempty"`
	Title      string       `json:"title,omitempty"`
	Options    []optionJSON `json:"options,omitempty"`
	Chosen     string       `json:"chosen,omitempty"`
	AskedMS    int64        `json:"askedMs,omitempty"`
	AnsweredMS int64        `json:"answeredMs,omitempty"`
}

type planEntryJSON struct {
	Content  string `json:"content"`
	Priority string `json:"priority,omitempty"`
	Status   string `json:"status,omitempty"`
}

type planJSON struct {
	Entries []planEntryJSON `json:"entries"`
}

type choiceJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

type commandJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type configJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Value string `json:"value"`
}

type metaJSON struct {
	Modes        []choiceJSON  `json:"modes,omitempty"`
	CurrentMode  string        `json:"currentMode,omitempty"`
	Models       []choiceJSON  `json:"models,omitempty"`
	CurrentModel string        `json:"currentModel,omitempty"`
	Commands     []commandJSON `json:"commands,omitempty"`
	Config       []configJSON  `json:"config,omitempty"`
}

type modeChangeJSON struct {
	Previous string `json:"previous"`
	New      string `json:"new"`
}

// convert maps a slice with f, keeping nil and empty alike as nil.
func convert[S ~[]E, E, T any](s S, f func(E) T) []T {
	if len(s) == 0 {
		return nil
	}
	out := make([]T, len(s))
	for i, e := range s {
		out[i] = f(e)
	}
	return out
}

// rawJSON returns raw for storing as JSON. Raw values the agent sent are
// valid JSON; anything else is kept as a JSON string rather than making the
// entry impossible to save.
func rawJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil || json.Valid(raw) {
		return raw
	}
	s, _ := json.Marshal(string(raw)) // cannot fail for a string
	return s
}

// encodeBody returns the type and JSON data stored for b.
func encodeBody(b Body) (EntryType, []byte, error) {
	var v any
	switch b := b.(type) {
	case Message:
		v = messageJSON{Role: string(b.Role), Text: b.Text, Length: b.Length}
	case Thought:
		v = thoughtJSON(b)
	case ToolCall:
		v = toolCallJSON{
			ID: b.ID, Title: b.Title, Kind: b.Kind, Status: b.Status.String(),
			Input: rawJSON(b.Input), Output: rawJSON(b.Output),
			Content:   convert(b.Content, toolContentWire),
			Locations: convert(b.Locations, func(l projector.Location) locationJSON { return locationJSON(l) }),
		}
	case PermissionEntry:
		v = permissionJSON{
			RequestID: b.RequestID, ToolCallID: b.ToolCallID, Title: b.Title,
			Options: convert(b.Options, func(o PromptOption) optionJSON { return optionJSON(o) }),
			Chosen:  b.Chosen, AskedMS: toMS(b.Asked), AnsweredMS: toMS(b.Answered),
		}
	case Plan:
		v = planJSON{Entries: convert(b.Entries, func(e projector.PlanEntry) planEntryJSON { return planEntryJSON(e) })}
	case Meta:
		v = metaJSON{
			Modes:        convert(b.Modes, func(m Mode) choiceJSON { return choiceJSON(m) }),
			CurrentMode:  b.CurrentMode,
			Models:       convert(b.Models, func(m Model) choiceJSON { return choiceJSON(m) }),
			CurrentModel: b.CurrentModel,
			Commands:     convert(b.Commands, func(c projector.Command) commandJSON { return commandJSON(c) }),
			Config:       convert(b.Config, func(c projector.ConfigOption) configJSON { return configJSON(c) }),
		}
	case ModeChange:
		v = modeChangeJSON(b)
	case QuestionEntry:
		v = encodeQuestion(b)
	case nil:
		return "", nil, errors.New("entry has no body")
	default:
		return "", nil, fmt.Errorf("unknown entry body %T", b)
	}
	// Text and raw input stay readable in the file: no \u003c for "<".
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", nil, err
	}
	return b.entryType(), bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeBody parses the data stored for an entry of type typ.
func decodeBody(typ EntryType, data []byte) (Body, error) {
	switch typ {
	case TypeMessage:
		var w messageJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		switch Role(w.Role) {
		case RoleUser, RoleAssistant:
		default:
			return nil, fmt.Errorf("unknown message role %q", w.Role)
		}
		return Message{Role: Role(w.Role), Text: w.Text, Length: w.Length}, nil
	case TypeThought:
		var w thoughtJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		return Thought(w), nil
	case TypeToolCall:
		var w toolCallJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		return ToolCall{
			ID: w.ID, Title: w.Title, Kind: w.Kind, Status: parseStatus(w.Status),
			Input: w.Input, Output: w.Output,
			Content:   convert(w.Content, toolContentOf),
			Locations: convert(w.Locations, func(l locationJSON) projector.Location { return projector.Location(l) }),
		}, nil
	case TypePermission:
		var w permissionJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		return PermissionEntry{
			RequestID: w.RequestID, ToolCallID: w.ToolCallID, Title: w.Title,
			Options: convert(w.Options, func(o optionJSON) PromptOption { return PromptOption(o) }),
			Chosen:  w.Chosen, Asked: fromMS(w.AskedMS), Answered: fromMS(w.AnsweredMS),
		}, nil
	case TypePlan:
		var w planJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		return Plan{Entries: convert(w.Entries, func(e planEntryJSON) projector.PlanEntry { return projector.PlanEntry(e) })}, nil
	case TypeMeta:
		var w metaJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		return Meta{
			Modes:        convert(w.Modes, func(m choiceJSON) Mode { return Mode(m) }),
			CurrentMode:  w.CurrentMode,
			Models:       convert(w.Models, func(m choiceJSON) Model { return Model(m) }),
			CurrentModel: w.CurrentModel,
			Commands:     convert(w.Commands, func(c commandJSON) projector.Command { return projector.Command(c) }),
			Config:       convert(w.Config, func(c configJSON) projector.ConfigOption { return projector.ConfigOption(c) }),
		}, nil
	case TypeModeChange:
		var w modeChangeJSON
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		return ModeChange(w), nil
	case TypeQuestion:
		return decodeQuestion(data)
	}
	return nil, fmt.Errorf("unknown entry type %q", typ)
}

// parseStatus is projector.ParseToolStatus plus "cancelled", which the
// gateway itself may set.
func parseStatus(s string) projector.ToolStatus {
	if s == projector.StatusCancelled.String() {
		return projector.StatusCancelled
	}
	return projector.ParseToolStatus(s)
}
