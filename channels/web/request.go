package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// Bounds of request bodies.
const (
	// maxBodyBytes bounds every request body but a message's.
	maxBodyBytes = 1 << 20
	// maxMessageBodyBytes bounds a message's body, files included (in
	// base64): room for attach's limits.
	maxMessageBodyBytes = 12 << 20
	// maxUploads bounds the files of one message.
	maxUploads = 8
	// maxFileNameRunes bounds a file's name.
	maxFileNameRunes = 200
	// maxTextBytes bounds the text of a message a person writes.
	maxTextBytes = 64 << 10
	// maxAuthorRunes bounds an author's name.
	maxAuthorRunes = 64
	// maxIDBytes bounds an authorId.
	maxIDBytes = 128
	// maxOptionIDBytes bounds an optionId; the real check is that the
	// prompt offers it.
	maxOptionIDBytes = 1024
	// maxTitleInRunes bounds a title given when a thread is created.
	maxTitleInRunes = 200
)

// threadRequest is the body of POST /api/threads; the body is optional.
type threadRequest struct {
	Title string `json:"title"`
}

// authorFields are who a request says it is from. They are checked
// against the request's token, never trusted (see identity.author).
type authorFields struct {
	// Author is the name to show; optional. A named token's name is
	// fixed; otherwise it is a label.
	Author string `json:"author"`
	// AuthorID is optional; when given it must be the token's id.
	AuthorID string `json:"authorId"`
}

// messageRequest is the body of POST /api/threads/{id}/messages.
type messageRequest struct {
	authorFields
	Text  string   `json:"text"`
	Files []upload `json:"files"`
	// Agent, if set, picks the agent of a new thread by its name in
	// agents.list (see GET /api/me's "agents").
	Agent string `json:"agent"`
}

// upload is a file sent with a message.
type upload struct {
	Name string `json:"name"`
	// Type is the file's content type as the browser knows it ("" if
	// unknown).
	Type string `json:"type"`
	// Data is the file's bytes in standard base64.
	Data string `json:"data"`
	data []byte // Data decoded
}

// stopRequest is the body of POST /api/threads/{id}/stop.
type stopRequest struct {
	authorFields
	// All drops the messages queued behind the running turn too (the
	// Stop button held down); else the stop ends the running turn only.
	All bool `json:"all,omitempty"`
}

// answerRequest is the body of POST /api/threads/{id}/prompts/{msg}/answer.
type answerRequest struct {
	authorFields
	OptionID string `json:"optionId"`
}

// parseThreadRequest decodes and checks the body of POST /api/threads. An
// empty body is an untitled thread.
func parseThreadRequest(body []byte) (threadRequest, error) {
	var req threadRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	if err := decodeJSON(body, &req); err != nil {
		return threadRequest{}, err
	}
	req.Title = strings.TrimSpace(req.Title)
	if err := checkLine("title", req.Title, maxTitleInRunes); err != nil {
		return threadRequest{}, err
	}
	return req, nil
}

// parseRenameRequest decodes and checks the body of PATCH
// /api/threads/{id}: a thread request with a title.
func parseRenameRequest(body []byte) (threadRequest, error) {
	req, err := parseThreadRequest(body)
	if err == nil && req.Title == "" {
		err = errors.New(`"title" is empty`)
	}
	return req, err
}

// parseMessageRequest decodes and checks the body of a message post.
func parseMessageRequest(body []byte) (messageRequest, error) {
	var req messageRequest
	if err := decodeJSON(body, &req); err != nil {
		return messageRequest{}, err
	}
	if err := req.check(); err != nil {
		return messageRequest{}, err
	}
	switch {
	case strings.TrimSpace(req.Text) == "" && len(req.Files) == 0:
		return messageRequest{}, errors.New(`"text" is required (or "files")`)
	case len(req.Text) > maxTextBytes:
		return messageRequest{}, fmt.Errorf(`"text" has %d bytes, at most %d are allowed`, len(req.Text), maxTextBytes)
	case len(req.Files) > maxUploads:
		return messageRequest{}, fmt.Errorf(`"files" has %d files, at most %d are allowed`, len(req.Files), maxUploads)
	}
	if err := checkLine("agent", req.Agent, 64); err != nil {
		return messageRequest{}, err
	}
	for i := range req.Files {
		f := &req.Files[i]
		f.Name = strings.TrimSpace(f.Name)
		if f.Name == "" {
			return messageRequest{}, fmt.Errorf(`"files[%d].name" is required`, i)
		}
		if err := checkLine(fmt.Sprintf("files[%d].name", i), f.Name, maxFileNameRunes); err != nil {
			return messageRequest{}, err
		}
		if err := checkLine(fmt.Sprintf("files[%d].type", i), f.Type, 200); err != nil {
			return messageRequest{}, err
		}
		data, err := base64.StdEncoding.DecodeString(f.Data)
		if err != nil {
			return messageRequest{}, fmt.Errorf(`"files[%d].data" is not standard base64`, i)
		}
		f.data, f.Data = data, ""
	}
	return req, nil
}

// parseStopRequest decodes and checks the body of a stop request.
func parseStopRequest(body []byte) (stopRequest, error) {
	var req stopRequest
	if err := decodeJSON(body, &req); err != nil {
		return stopRequest{}, err
	}
	if err := req.check(); err != nil {
		return stopRequest{}, err
	}
	return req, nil
}

// parseAnswerRequest decodes and checks the body of a prompt answer.
func parseAnswerRequest(body []byte) (answerRequest, error) {
	var req answerRequest
	if err := decodeJSON(body, &req); err != nil {
		return answerRequest{}, err
	}
	if err := req.check(); err != nil {
		return answerRequest{}, err
	}
	if req.OptionID == "" {
		return answerRequest{}, errors.New(`"optionId" is required`)
	}
	if len(req.OptionID) > maxOptionIDBytes {
		return answerRequest{}, fmt.Errorf(`"optionId" has %d bytes, at most %d are allowed`, len(req.OptionID), maxOptionIDBytes)
	}
	return req, nil
}

// check trims and checks the author fields; both are optional.
func (a *authorFields) check() error {
	a.Author = strings.TrimSpace(a.Author)
	if err := checkLine("author", a.Author, maxAuthorRunes); err != nil {
		return err
	}
	if a.AuthorID == "" {
		return nil
	}
	return checkID("authorId", a.AuthorID)
}

// checkLine accepts one line of at most max code points without control
// characters.
func checkLine(field, s string, max int) error {
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Errorf("%q has %d characters, at most %d are allowed", field, n, max)
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return fmt.Errorf("%q must not contain control characters", field)
	}
	return nil
}

// checkID accepts a short id without spaces or control characters.
func checkID(field, s string) error {
	if len(s) > maxIDBytes {
		return fmt.Errorf("%q has %d bytes, at most %d are allowed", field, len(s), maxIDBytes)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return fmt.Errorf("%q must not contain spaces or control characters", field)
	}
	return nil
}

// decodeJSON decodes exactly one JSON object into v, rejecting unknown
// fields, and turns decoder errors into messages for the person who sent
// the request.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("the request body is empty, want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: unexpected data after the object")
	}
	return nil
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("invalid JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Errorf("invalid JSON: %q must be %s, got %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("invalid JSON: want an object, got %s", typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("invalid JSON: the body ends in the middle of the object")
	default:
		return fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

func jsonKind(k string) string {
	if k == "string" {
		return "a string"
	}
	return k
}

// commandRequest is the body of POST /api/threads/{id}/commands.
type commandRequest struct {
	authorFields
	// Name is the command's name without the slash; Args its argument.
	Name string `json:"name"`
	Args string `json:"args"`
}

// commandName is what a command's name may be.
var commandName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// parseCommandRequest decodes and checks the body of a command.
func parseCommandRequest(body []byte) (commandRequest, error) {
	var req commandRequest
	if err := decodeJSON(body, &req); err != nil {
		return commandRequest{}, err
	}
	if err := req.check(); err != nil {
		return commandRequest{}, err
	}
	req.Name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(req.Name), "/"))
	if !commandName.MatchString(req.Name) {
		return commandRequest{}, fmt.Errorf(`"name" must be a command's name (a-z, 0-9, '-', '_', at most 32), not %q`, req.Name)
	}
	req.Args = strings.TrimSpace(req.Args)
	if err := checkLine("args", req.Args, 500); err != nil {
		return commandRequest{}, err
	}
	return req, nil
}

// formRequest is the body of POST /api/threads/{id}/forms/{msg}/answer.
type formRequest struct {
	authorFields
	Action channels.FormAction `json:"action"`
	// Values are the fields' values by field id (see FormAnswer).
	Values map[string][]string `json:"values"`
}

// maxFormBytes bounds all the values of a form's answer.
const maxFormBytes = 256 << 10

// parseFormRequest decodes and checks the body of a form's answer; the
// values are checked against the form by checkAnswer.
func parseFormRequest(body []byte) (formRequest, error) {
	var req formRequest
	if err := decodeJSON(body, &req); err != nil {
		return formRequest{}, err
	}
	if err := req.check(); err != nil {
		return formRequest{}, err
	}
	if req.Action == "" {
		return formRequest{}, errors.New(`"action" is required: accept, decline or cancel`)
	}
	n := 0
	for id, vs := range req.Values {
		n += len(id)
		for _, v := range vs {
			n += len(v)
		}
	}
	if n > maxFormBytes {
		return formRequest{}, fmt.Errorf(`"values" have %d bytes, at most %d are allowed`, n, maxFormBytes)
	}
	return req, nil
}
