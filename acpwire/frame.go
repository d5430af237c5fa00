package acpwire

import (
	"math"
	"strconv"

	"github.com/acpgw/gateway/projector"
)

// Kind is the kind of a JSON-RPC frame.
type Kind uint8

// The kinds of frame. The zero Kind is never returned by a successful Decode.
const (
	// Request has a method and an id.
	Request Kind = iota + 1
	// Notification has a method and no id.
	Notification
	// Result is a response with an id and a result.
	Result
	// Error is a response with an id and an error.
	Error
)

// String returns the kind's name in lower case.
func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Result:
		return "result"
	case Error:
		return "error"
	}
	return "invalid"
}

// Frame is one decoded JSON-RPC 2.0 frame. Byte slices alias the decoded
// line; strings are copies.
type Frame struct {
	Kind Kind
	// Method is the method of a request or notification. Known ACP methods
	// are interned constants; others are copies.
	Method string
	// ID is the raw id token (`3`, `"abc"`, `null`), nil for notifications.
	// It aliases the line; use IDString for a map key.
	ID []byte
	// Params is the raw params value, nil if absent. It aliases the line.
	Params []byte
	// Result is the raw result value of a Result frame. It aliases the line.
	Result []byte
	// Err is the error of an Error frame.
	Err *RPCError
	// Update is the decoded update of a session/update notification, with
	// Update.SessionID from params.sessionId.
	Update projector.Update
	// StopReason is the string "stopReason" of a Result frame's result
	// object, "" if it has none.
	StopReason string

	// scratch holds strings while they are unescaped, key object keys.
	scratch, key []byte
	// cache keeps the last session, message and tool call ids so that
	// the runs of frames that repeat them share one string.
	cache [numCached]string
	// ann holds the members of a content.annotations object.
	ann []annotation
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64
	Message string
	// Data is the raw data value, nil if absent. It aliases the line.
	Data []byte
}

// Error implements error.
func (e *RPCError) Error() string {
	return "json-rpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// Slots of Frame.cache.
const (
	cacheSession = iota
	cacheMessage
	cacheTool
	numCached
)

// reset clears every exported field, keeping scratch storage.
func (f *Frame) reset() {
	f.Kind = 0
	f.Method = ""
	f.ID = nil
	f.Params = nil
	f.Result = nil
	f.Err = nil
	f.Update = projector.Update{}
	f.StopReason = ""
}

// methodSessionUpdate is the method whose params Decode decodes.
const methodSessionUpdate = "session/update"

// Depths (numbers of enclosing containers) of the values Decode descends into.
const (
	depthEnvelope = 1 // members of the frame object
	depthParams   = 2 // members of params, result, error
	depthUpdate   = 3 // members of params.update
	depthBlock    = 4 // members of objects inside the update
)

// Decode parses one line into f, reusing f's storage (every field is reset
// first). Byte slices in f alias line; strings are copies. Leading and
// trailing whitespace (including the line's newline) is ignored.
//
// Decode returns a *DecodeError, with the byte offset and what was expected,
// for malformed JSON or for a value that is not a JSON-RPC 2.0 frame; also for
// a session/update whose params are not an object with an update object
// holding a string sessionUpdate. f is then undefined. Unknown sessionUpdate
// tags are not an error.
func Decode(line []byte, f *Frame) error {
	f.reset()
	d := decoder{data: line, f: f}
	return d.frame()
}

// frame decodes the envelope.
func (d *decoder) frame() error {
	f := d.f
	data := d.data
	i := d.ws(0)
	if i >= len(data) || data[i] != '{' {
		return d.fail(i, "'{' starting a JSON-RPC frame")
	}
	start := i
	var (
		version, method, id, params, result, rpcErr token
		// paramsDone is set when the last params member was decoded
		// as session/update params while it was scanned.
		paramsDone bool
	)
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return err
		}
		if !ok {
			i = v
			break
		}
		switch string(d.key(key, kfl)) {
		case "params":
			paramsDone = false
			if method.kind == '"' && f.Method == methodSessionUpdate && v < len(data) && data[v] == '{' {
				if i, err = d.updateParams(v); err != nil {
					return err
				}
				params = token{kind: '{', raw: data[v:i], at: v}
				paramsDone = true
				continue
			}
			params, i, err = d.next(v, depthEnvelope)
		case "method":
			method, i, err = d.next(v, depthEnvelope)
			if err == nil && method.kind == '"' {
				f.Method = d.method(method)
			}
		case "jsonrpc":
			version, i, err = d.next(v, depthEnvelope)
		case "id":
			id, i, err = d.next(v, depthEnvelope)
		case "result":
			result, i, err = d.next(v, depthEnvelope)
		case "error":
			rpcErr, i, err = d.next(v, depthEnvelope)
		default:
			i, err = d.skip(v, depthEnvelope)
		}
		if err != nil {
			return err
		}
	}
	if end := d.ws(i); end != len(data) {
		return d.fail(end, "end of line after the frame")
	}
	if version.kind != '"' || string(d.bytes(version.raw, version.fl)) != "2.0" {
		return &DecodeError{Offset: start, Msg: `not a JSON-RPC 2.0 frame: expected "jsonrpc": "2.0"`}
	}
	switch id.kind {
	case 0:
	case '"', '0', 'n':
		f.ID = d.span(id)
	default:
		return &DecodeError{Offset: id.at, Msg: "expected string, number or null id"}
	}
	if params.kind != 0 {
		if params.kind != '{' && params.kind != '[' {
			return &DecodeError{Offset: params.at, Msg: "expected object or array params"}
		}
		f.Params = params.raw
	}
	if method.kind != 0 {
		if method.kind != '"' {
			f.Method = ""
			return &DecodeError{Offset: method.at, Msg: "expected string method"}
		}
		if result.kind != 0 || rpcErr.kind != 0 {
			return &DecodeError{Offset: start, Msg: "not a JSON-RPC 2.0 frame: a request has no result or error"}
		}
		f.Kind = Request
		if id.kind == 0 {
			f.Kind = Notification
		}
		if f.Method != methodSessionUpdate {
			f.Update = projector.Update{}
			return nil
		}
		if params.kind != '{' {
			return &DecodeError{Offset: params.at, Msg: "expected object params for session/update"}
		}
		if !paramsDone {
			if _, err := d.updateParams(params.at); err != nil {
				return err
			}
		}
		if d.updErr != "" {
			return &DecodeError{Offset: d.updErrAt, Msg: d.updErr}
		}
		return nil
	}
	f.Update = projector.Update{}
	if id.kind == 0 {
		return &DecodeError{Offset: start, Msg: "not a JSON-RPC 2.0 frame: expected method or id"}
	}
	switch {
	case result.kind != 0 && rpcErr.kind != 0:
		return &DecodeError{Offset: start, Msg: "not a JSON-RPC 2.0 frame: a response has result or error, not both"}
	case result.kind != 0:
		f.Kind = Result
		f.Result = d.span(result)
		if result.kind == '{' {
			return d.stopReason(result.at)
		}
		return nil
	case rpcErr.kind != 0:
		f.Kind = Error
		return d.rpcError(rpcErr)
	}
	return &DecodeError{Offset: start, Msg: "not a JSON-RPC 2.0 frame: expected method, result or error"}
}

// stopReason sets f.StopReason from the validated result object at i.
func (d *decoder) stopReason(i int) error {
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil || !ok {
			return err
		}
		if string(d.key(key, kfl)) != "stopReason" {
			if i, err = d.skip(v, depthParams); err != nil {
				return err
			}
			continue
		}
		t, end, err := d.next(v, depthParams)
		if err != nil {
			return err
		}
		i = end
		d.f.StopReason = ""
		if t.kind == '"' {
			d.f.StopReason = d.word(t)
		}
	}
}

// rpcError decodes the error object t into f.Err.
func (d *decoder) rpcError(t token) error {
	at := t.at
	if t.kind != '{' {
		return &DecodeError{Offset: at, Msg: "expected object error"}
	}
	e := &RPCError{}
	var code, msg token
	i := at + 1
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		var tok token
		if tok, i, err = d.next(v, depthParams); err != nil {
			return err
		}
		switch string(d.key(key, kfl)) {
		case "code":
			code = tok
		case "message":
			msg = tok
		case "data":
			e.Data = d.span(tok)
		}
	}
	n, ok := int64(0), false
	if code.kind == '0' {
		n, ok = parseInt(code.raw)
	}
	if !ok {
		return &DecodeError{Offset: at, Msg: "expected integer error code"}
	}
	if msg.kind != '"' {
		return &DecodeError{Offset: at, Msg: "expected string error message"}
	}
	e.Code = n
	e.Message = d.str(msg.raw, msg.fl)
	d.f.Err = e
	return nil
}

// IDString returns the id in a canonical form usable as a map key: "" when
// there is no id, "null", a number in its shortest form ("3"; "3.0" and
// "3e0" also give "3"), or a string's decoded value between double quotes
// (`"abc"` and `"\u0061bc"` both give `"abc"`). Numbers and strings never
// collide.
func (f *Frame) IDString() string {
	id := f.ID
	if len(id) == 0 {
		return ""
	}
	switch id[0] {
	case '"':
		b := make([]byte, 0, len(id))
		b = append(b, '"')
		b = appendUnquoted(b, id[1:len(id)-1])
		return string(append(b, '"'))
	case 'n':
		return "null"
	}
	if n, ok := parseInt(id); ok && n > -1<<53 && n < 1<<53 {
		return strconv.FormatInt(n, 10)
	}
	x, err := strconv.ParseFloat(string(id), 64)
	if err != nil || math.IsInf(x, 0) {
		return string(id)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
