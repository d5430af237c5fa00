package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgw/gateway/acpwire"
)

// The gateway's end of the JSON-RPC connection is the tap's, not the
// SDK's: the SDK's Connection reads with a bufio.Scanner whose 1 MiB
// buffer it allocates for every connection, live or idle, and it takes no
// framing but its own. The tap reads every line anyway; it matches the
// answers to the requests it sends, and the SDK gives the types.

// rawReply is the answer to a request.
type rawReply struct {
	result json.RawMessage
	err    *acp.RequestError
}

// message is a request or notification to the agent, its members in the
// usual order.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  any             `json:"params,omitempty"`
}

// errNoAnswer is a request the agent closed its output without answering.
var errNoAnswer = errors.New("the agent closed its output before answering")

// call sends a request and waits for its answer, for the agent's output
// to end (errNoAnswer), or for ctx (which Process.callContext ends when
// the process exits): then it tells the agent with $/cancel_request and
// returns ctx's cause. An answer with an error is an *acp.RequestError.
func (t *tap) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	t.mu.Lock()
	t.next++
	id := strconv.Itoa(t.next)
	key := "n:" + id
	ch := make(chan rawReply, 1)
	if t.calls == nil {
		t.calls = map[string]chan rawReply{}
	}
	t.calls[key] = ch
	t.mu.Unlock()
	forget := func() {
		t.mu.Lock()
		delete(t.calls, key)
		t.mu.Unlock()
	}
	line, err := json.Marshal(message{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method, Params: params})
	if err != nil {
		forget()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if _, err := t.Write(append(line, '\n')); err != nil {
		forget()
		return nil, fmt.Errorf("write to the agent: %w", err)
	}
	select {
	case r := <-ch:
		return r.value()
	case <-t.done:
		select {
		case r := <-ch: // answered just before the end
			return r.value()
		default:
		}
		forget()
		return nil, errNoAnswer
	case <-ctx.Done():
		forget()
		select {
		case <-t.done:
		default:
			if err := t.notify("$/cancel_request", map[string]json.RawMessage{"requestId": json.RawMessage(id)}); err != nil {
				t.log.Debug("cannot cancel a request", "method", method, "err", err)
			}
		}
		return nil, context.Cause(ctx)
	}
}

func (r rawReply) value() (json.RawMessage, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.result, nil
}

// request is call for a result of type T (left zero when the result is
// empty or null).
func request[T any](ctx context.Context, t *tap, method string, params any) (T, error) {
	var out T
	raw, err := t.call(ctx, method, params)
	if err != nil {
		return out, err
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return out, fmt.Errorf("the agent's result does not parse: %w", err)
		}
	}
	return out, nil
}

// notify sends a notification.
func (t *tap) notify(method string, params any) error {
	line, err := json.Marshal(message{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if _, err := t.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write to the agent: %w", err)
	}
	return nil
}

// deliver hands an answer from the agent to the call waiting for it. An
// answer to no call waiting (one whose caller gave up) is dropped.
func (t *tap) deliver(f *acpwire.Frame) {
	key := idKey(f.ID)
	t.mu.Lock()
	ch, ok := t.calls[key]
	delete(t.calls, key)
	t.mu.Unlock()
	if !ok {
		t.log.Debug("an answer to no request waiting; dropped", "id", f.IDString())
		return
	}
	// f.Result aliases the line, which is never reused.
	r := rawReply{result: f.Result}
	if f.Kind == acpwire.Error {
		r.result = nil
		r.err = &acp.RequestError{Code: -32603, Message: "error without an error object"}
		if f.Err != nil {
			r.err = &acp.RequestError{Code: int(f.Err.Code), Message: f.Err.Message}
			if len(f.Err.Data) > 0 {
				var data any
				if json.Unmarshal(f.Err.Data, &data) == nil {
					r.err.Data = data
				}
			}
		}
	}
	ch <- r
}

// respond writes a JSON-RPC response to the agent: result, or else errObj.
func (t *tap) respond(id, result, errObj []byte) {
	line := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if result != nil {
		line = append(append(append(line, `,"result":`...), result...), "}\n"...)
	} else {
		line = append(append(append(line, `,"error":`...), errObj...), "}\n"...)
	}
	if _, err := t.Write(line); err != nil {
		t.log.Debug("cannot answer the agent", "err", err)
	}
}

// respondError answers the agent's request id with re.
func (t *tap) respondError(id []byte, re *acp.RequestError) {
	b, err := json.Marshal(re)
	if err != nil {
		b = []byte(`{"code":-32603,"message":"Internal error"}`)
	}
	t.respond(id, nil, b)
}

// inbound registers cancel as what $/cancel_request for the agent's
// request id calls; the returned func forgets it, when the request is
// answered.
func (t *tap) inbound(id []byte, cancel context.CancelFunc) (done func()) {
	key := idKey(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight == nil {
		t.inflight = map[string]context.CancelFunc{}
	}
	t.inflight[key] = cancel
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.inflight, key)
	}
}

// cancelInbound is $/cancel_request from the agent: the request it names
// stops waiting for its answer (a permission question is answered
// cancelled).
func (t *tap) cancelInbound(params []byte) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(bytes.TrimSpace(p.RequestID)) == 0 {
		t.log.Warn("$/cancel_request without a requestId; ignored", "params", clip(params))
		return
	}
	t.mu.Lock()
	cancel := t.inflight[idKey(p.RequestID)]
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
