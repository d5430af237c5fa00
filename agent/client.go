package agent

import (
	"context"
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
)

// The client side of ACP: the requests an agent sends the gateway. The
// gateway offers no file system and no terminals: those methods, and any
// other it does not know, answer "method not found", as ACP allows when
// a capability is not advertised. (elicitation/create is elicit.go's.)

// request answers one request from the agent other than
// elicitation/create (raw JSON-RPC id and params, copies). Called on the
// reader goroutine; a permission question is answered on its own
// goroutine, owned by the process, whose context ends when the process
// exits or the agent sends $/cancel_request for it.
func (p *Process) request(id []byte, method string, params []byte) {
	if method != acp.ClientMethodSessionRequestPermission {
		p.tap.respondError(id, acp.NewMethodNotFound(method))
		return
	}
	var r acp.RequestPermissionRequest
	err := json.Unmarshal(params, &r)
	if err == nil {
		err = r.Validate()
	}
	if err != nil {
		p.log.Warn("the agent's permission request does not parse; answered invalid params", "err", err)
		p.tap.respondError(id, acp.NewInvalidParams(map[string]any{"error": err.Error()}))
		return
	}
	ctx, stop := p.callContext(context.Background())
	ctx, cancel := context.WithCancel(ctx)
	done := p.tap.inbound(id, cancel)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer stop()
		defer cancel()
		defer done()
		resp := p.permission(ctx, r)
		result, err := json.Marshal(resp)
		if err != nil {
			p.tap.respondError(id, acp.NewInternalError(map[string]any{"error": err.Error()}))
			return
		}
		p.tap.respond(id, result, nil)
	}()
}

// permission blocks until the session's Handler has an answer, or ctx
// ends (then the answer is cancelled).
func (p *Process) permission(ctx context.Context, r acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
	s, child := p.handlerOf(string(r.SessionId))
	if s == nil {
		p.log.Warn("permission request for an unknown session; answering cancelled", "session", r.SessionId)
		return cancelled
	}
	req := permissionRequest(r, p.log)
	req.Subagent = child
	id, ok := s.h.Permission(ctx, req)
	if !ok {
		return cancelled
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}
}

// elicitationComplete is elicitation/complete: the agent says a url
// question was done; the question waiting for it learns it through
// Question.Completed. Called on the reader goroutine.
func (p *Process) elicitationComplete(params []byte) {
	var n acp.UnstableCompleteElicitationNotification
	err := json.Unmarshal(params, &n)
	if err == nil {
		err = n.Validate()
	}
	if err != nil {
		p.log.Warn("the agent's elicitation/complete does not parse; ignored", "err", err)
		return
	}
	p.completed(string(n.ElicitationId))
}
