package agent

import (
	"context"

	acp "github.com/coder/acp-go-sdk"
)

// client is the gateway's implementation of the SDK's Client interface. The
// gateway offers no file system and no terminals: those methods answer
// "method not found", as ACP allows when a capability is not advertised.
type client struct{ p *Process }

var _ acp.Client = (*client)(nil)

// RequestPermission runs on its own SDK goroutine and blocks until the
// session's Handler has an answer.
func (c *client) RequestPermission(ctx context.Context, r acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	s, child := c.p.handlerOf(string(r.SessionId))
	if s == nil {
		c.p.log.Warn("permission request for an unknown session; answering cancelled", "session", r.SessionId)
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	req := permissionRequest(r, c.p.log)
	req.Subagent = child
	id, ok := s.h.Permission(ctx, req)
	if !ok {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}, nil
}

// UnstableCompleteElicitation is elicitation/complete: the agent says a
// url question was done; the question waiting for it learns it through
// Question.Completed.
func (c *client) UnstableCompleteElicitation(_ context.Context, n acp.UnstableCompleteElicitationNotification) error {
	c.p.completed(string(n.ElicitationId))
	return nil
}

// SessionUpdate is not reached: the tap handles session/update lines
// before the SDK sees them.
func (c *client) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	c.p.log.Warn("session/update reached the SDK; ignored", "session", n.SessionId)
	return nil
}

func (c *client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (c *client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
