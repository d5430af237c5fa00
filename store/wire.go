package store

// The JSON records the two backends share: a running turn's prompt (the
// prompt column of running_turns, and inside the cluster's running
// marks), a thread's open messages (open_messages.data, and the
// cluster's open bucket) and a transcript entry as the cluster keeps it
// (MarshalEntry). Each is a wire type of its own, never a domain type:
// rename Go fields freely, never a JSON name.
//
// Keys are camelCase, as in the ACP messages the gateway stores and in
// the entries' data (codec.go); times are Unix milliseconds, in a key
// ending in "Ms" (0 or absent for a zero time). Every record carries
// its version, "v": 1. A record without one was written before records
// had wire types (version 0, with the Go field names of the time) and is
// read still; one of a higher version than WireVersion is refused, not
// guessed at.

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/acpgw/gateway/channels"
)

// WireVersion is the version of the records this code writes.
const WireVersion = 1

// RecordVersion reads the "v" of a stored JSON object: 0 for a record
// written before records had a version. It fails for a version above
// WireVersion, and for one that is not a positive integer.
func RecordVersion(b []byte) (int, error) {
	var p struct {
		V json.RawMessage `json:"v"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return 0, err
	}
	if p.V == nil {
		return 0, nil
	}
	var v int
	if err := json.Unmarshal(p.V, &v); err != nil || v < 1 {
		return 0, fmt.Errorf("bad record version %s", p.V)
	}
	if v > WireVersion {
		return 0, fmt.Errorf("record version %d is newer than this gateway knows (%d)", v, WireVersion)
	}
	return v, nil
}

// MarshalWire encodes a wire value as stored: no HTML escapes (text stays
// readable, "<" as is), no trailing newline.
func MarshalWire(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ThreadWire is a thread as records keep it.
type ThreadWire struct {
	Platform string `json:"platform"`
	Channel  string `json:"channel"`
	Thread   string `json:"thread"`
}

// WireThread converts t for a record.
func WireThread(t channels.ThreadRef) ThreadWire { return ThreadWire(t) }

// Ref is the thread w names.
func (w ThreadWire) Ref() channels.ThreadRef { return channels.ThreadRef(w) }

type turnPromptWire struct {
	V      int        `json:"v"`
	ID     string     `json:"id,omitempty"`
	Author authorWire `json:"author"`
	Text   string     `json:"text,omitempty"`
	Files  []fileWire `json:"files,omitempty"`
	Space  string     `json:"space,omitempty"`
	TimeMS int64      `json:"timeMs,omitempty"`
}

type authorWire struct {
	ID    string   `json:"id,omitempty"`
	Name  string   `json:"name,omitempty"`
	Bot   bool     `json:"bot,omitempty"`
	Self  bool     `json:"self,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

type fileWire struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType,omitempty"`
	Size        int    `json:"size,omitempty"`
	URL         string `json:"url,omitempty"`
	Text        string `json:"text,omitempty"`
	Data        []byte `json:"data,omitempty"`
	Skipped     string `json:"skipped,omitempty"`
}

// MarshalTurnPrompt encodes p as both backends keep it.
func MarshalTurnPrompt(p TurnPrompt) ([]byte, error) {
	a := p.Author
	return MarshalWire(turnPromptWire{
		V: WireVersion, ID: string(p.ID),
		Author: authorWire{ID: a.ID, Name: a.Name, Bot: a.Bot, Self: a.Self, Roles: a.Roles},
		Text:   p.Text, Space: p.Space, TimeMS: toMS(p.Time),
		Files: convert(p.Files, func(f channels.File) fileWire {
			return fileWire{Name: f.Name, ContentType: f.ContentType, Size: f.Size, URL: f.URL, Text: f.Text, Data: f.Data, Skipped: f.Skipped}
		}),
	})
}

// UnmarshalTurnPrompt decodes what MarshalTurnPrompt encoded, or a prompt
// of version 0.
func UnmarshalTurnPrompt(b []byte) (TurnPrompt, error) {
	v, err := RecordVersion(b)
	if err != nil {
		return TurnPrompt{}, err
	}
	if v == 0 {
		var o turnPromptV0
		if err := json.Unmarshal(b, &o); err != nil {
			return TurnPrompt{}, err
		}
		return o.prompt(), nil
	}
	var w turnPromptWire
	if err := json.Unmarshal(b, &w); err != nil {
		return TurnPrompt{}, err
	}
	a := w.Author
	return TurnPrompt{
		ID:     channels.MessageID(w.ID),
		Author: channels.Author{ID: a.ID, Name: a.Name, Bot: a.Bot, Self: a.Self, Roles: a.Roles},
		Text:   w.Text, Space: w.Space, Time: fromMS(w.TimeMS),
		Files: convert(w.Files, func(f fileWire) channels.File {
			return channels.File{Name: f.Name, ContentType: f.ContentType, Size: f.Size, URL: f.URL, Text: f.Text, Data: f.Data, Skipped: f.Skipped}
		}),
	}, nil
}

type openMessagesWire struct {
	V        int               `json:"v"`
	Messages []openMessageWire `json:"messages"`
}

type openMessageWire struct {
	Key   string         `json:"key"`
	ID    string         `json:"id"`
	Card  bool           `json:"card,omitempty"`
	Lines []openLineWire `json:"lines"`
}

type openLineWire struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

// EncodeOpenMessages encodes a thread's open messages as both backends
// keep them.
func EncodeOpenMessages(ms []OpenMessage) ([]byte, error) {
	return MarshalWire(openMessagesWire{V: WireVersion, Messages: convert(ms, func(m OpenMessage) openMessageWire {
		return openMessageWire{Key: m.Key, ID: string(m.ID), Card: m.Card,
			Lines: convert(m.Lines, func(l OpenLine) openLineWire { return openLineWire(l) })}
	})})
}

// DecodeOpenMessages decodes what EncodeOpenMessages encoded, or a list
// of version 0 (a JSON array), refusing one without a message id or
// lines.
func DecodeOpenMessages(b []byte) ([]OpenMessage, error) {
	var ws []openMessageWire
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		// Version 0: the list itself, its keys as they are now.
		if err := json.Unmarshal(b, &ws); err != nil {
			return nil, err
		}
	} else {
		if _, err := RecordVersion(b); err != nil {
			return nil, err
		}
		var w openMessagesWire
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, err
		}
		ws = w.Messages
	}
	if len(ws) == 0 {
		return nil, nil
	}
	ms := make([]OpenMessage, len(ws))
	for i, w := range ws {
		if w.ID == "" || len(w.Lines) == 0 {
			return nil, fmt.Errorf("open message %q: no message id or no lines", w.Key)
		}
		ms[i] = OpenMessage{Key: w.Key, ID: channels.MessageID(w.ID), Card: w.Card,
			Lines: convert(w.Lines, func(l openLineWire) OpenLine { return OpenLine(l) })}
	}
	return ms, nil
}
