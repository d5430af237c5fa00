package channeltest

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/acpgw/gateway/channels"
)

// Op is one recorded operation, as `gateway replay` prints it: one JSON
// object per line, with fields in declaration order and empty fields left
// out (except Op).
//
// Op names are "send" (Post), "edit", "form", "typing" (State "start", "refresh" or
// "stop"), "prompt", "upload", and whatever Recorder.Note adds, such as "turn_end".
type Op struct {
	// Op names the operation.
	Op string `json:"op"`
	// Msg is the id of the message posted, edited or prompted.
	Msg channels.MessageID `json:"msg,omitempty"`
	// Kind is the message's kind; prompts are channels.KindPermission.
	Kind channels.Kind `json:"kind,omitempty"`
	// Key is the message's edit key, if any.
	Key string `json:"key,omitempty"`
	// State is the typing state: "start", "refresh" or "stop".
	State string `json:"state,omitempty"`
	// Text is the message's text as the adapter received it.
	Text string `json:"text,omitempty"`
	// Options are the option ids of a prompt, in order.
	Options []string `json:"options,omitempty"`
	// Attachment is the file a prompt carries, if any.
	Attachment *channels.Attachment `json:"attachment,omitempty"`
	// File is the name of an uploaded file ("upload"), ContentType its
	// media type and Bytes its size.
	File        string `json:"file,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Bytes       int    `json:"bytes,omitempty"`
	// StopReason is the ACP stop reason of a "turn_end" note.
	StopReason string `json:"stopReason,omitempty"`
	// Error is the error text of a failed call (only in Recorder.Attempts).
	Error string `json:"error,omitempty"`
}

func (o Op) clone() Op {
	if o.Options != nil {
		o.Options = append([]string(nil), o.Options...)
	}
	return o
}

// WriteOps writes ops to w as JSON lines, one object per line, the format
// `gateway replay` prints. HTML characters are not escaped, so the lines
// read as the text was written.
func WriteOps(w io.Writer, ops []Op) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, op := range ops {
		if err := enc.Encode(op); err != nil {
			return fmt.Errorf("write op %d: %w", i, err)
		}
	}
	return nil
}

// Message is the current state of one message posted through a Recorder.
type Message struct {
	// ID is "m1", "m2", ... in post order; posts and prompts share the
	// counter, failed calls take no id.
	ID     channels.MessageID
	Thread channels.ThreadRef
	Kind   channels.Kind
	Key    string
	// Text is the text after the last successful edit.
	Text string
	// Options are the option ids of a prompt; nil for other messages.
	Options []string
	// Attachment is the file a prompt carries, if any.
	Attachment *channels.Attachment
	// File is the file of an upload (Kind channels.KindFile), whose
	// caption is Text.
	File *channels.Upload
	// Form is the form of a "form" op (Recorder's channels.Former).
	Form *channels.Form
	// Edits counts the successful edits of the message.
	Edits int
}

func (m Message) clone() Message {
	if m.Options != nil {
		m.Options = append([]string(nil), m.Options...)
	}
	return m
}
